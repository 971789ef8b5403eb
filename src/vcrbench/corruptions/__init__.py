"""Corruptions on continuous parameter domains: the paper's 14 and any user function.

>>> from vcrbench.corruptions import get_corruption
>>> c = get_corruption("gaussian_noise")
>>> c.apply(image, {"sigma": 0.1}, seed=0)  # doctest: +SKIP

See ``docs/corruptions.md`` for each corruption, its domain and why.
"""

# The built-in corruptions register themselves on import; the toolbox's variants after them.
from vcrbench.corruptions import (  # noqa: F401
    albu,
    geirhos,
    geirhos2018,
    imagenet_c,
    imagenet_c_contrast,
    toolbox,
)
from vcrbench.corruptions.corruption import Corruption, Param
from vcrbench.corruptions.domains import DOMAIN_SETS, calibrated_domains, domain_set
from vcrbench.corruptions.registry import (
    CorruptionError,
    build_corruption,
    get_corruption,
    list_corruptions,
    list_variants,
    load_function,
    register_corruption,
    register_variant,
    registered_category,
    unregister_corruption,
)

__all__ = [
    "DOMAIN_SETS",
    "Corruption",
    "CorruptionError",
    "Param",
    "build_corruption",
    "calibrated_domains",
    "domain_set",
    "get_corruption",
    "list_corruptions",
    "list_variants",
    "load_function",
    "register_corruption",
    "register_variant",
    "registered_category",
    "unregister_corruption",
]
