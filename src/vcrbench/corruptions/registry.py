"""The corruption registry: the built-in corruptions and their variants, found by name.

Built-in corruptions (a :class:`~vcrbench.corruptions.corruption.Corruption`: a function, its
parameters and their domain, its output cast to uint8 by rounding or, with the ``cast``
option, truncating) are registered with :func:`register_corruption`; a user's own
function is found from a Python path (``"package.module:function"``) given in the config entry,
with its domain, and needs no change to the workflow.

Domains of the built-ins are calibrated on measured Δv and stored, with the reason for each, in
``vcrbench/data/corruption_domains.yaml``; a config entry may override them (``{"domain": {"sigma":
[lo, hi]}}``).

A corruption may have named variants (:func:`register_variant`), chosen by a config entry's
``variant``: another function for its VCR sets (its ImageNet-C sets keep the registered one,
:meth:`Corruption.for_imagenet_c`) and/or some parameters replaced, e.g. by a discrete one
(``Param(grid=...)``): the VCR authors' toolbox (``variant: toolbox``,
:mod:`vcrbench.corruptions.toolbox`) draws odd kernel sizes only and resizes its frost photograph.
"""

from __future__ import annotations

import importlib
import importlib.resources
import inspect
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from vcrbench.corruptions.corruption import (
    Corruption,
    CorruptionFunction,
    Param,
    Variant,
)
from vcrbench.corruptions.domains import calibrated_domains, domain_set, with_domain_set
from vcrbench.corruptions.values import DEFAULT_CAST, check_cast, check_interval
from vcrbench.errors import CorruptionError, did_you_mean
from vcrbench.vocab import (
    CORRUPTION_CATEGORIES,
    DEFAULT_DOMAIN_SET,
    OTHER_CATEGORY,
)

#: Similarity classes of docs/method.md §6: human data of one member may serve the whole class.
#: ``contrast`` (ImageNet-C's and Geirhos et al.'s contrast reduction) is VCR-Bench's, not the
#: paper's: see docs/humans.md.
SIMILARITY_CLASSES = ("noise", "blur", "contrast")
#: Keys of a corruption's config entry that get_corruption understands.
OPTION_KEYS = frozenset(
    {
        "domain",
        "domain_set",
        "reason",
        "function",
        "imagenet_c",
        "similarity_class",
        "identity",
        "n_samples",
        "variant",
        "cast",
    }
)

# --------------------------------------------------------------------------- the registry

_REGISTRY: dict[str, Corruption] = {}
_VARIANTS: dict[str, dict[str, Variant]] = {}


def register_corruption(
    name: str,
    *,
    params: Sequence[Param],
    source: str = "user",
    domain: Mapping[str, Sequence[float]] | None = None,
    imagenet_c: Sequence[Mapping[str, float]] | None = None,
    similarity_class: str | None = None,
    category: str = OTHER_CATEGORY,
    description: str = "",
    function: CorruptionFunction | None = None,
    replace_existing: bool = False,
):
    """Register a corruption; use as a decorator, or pass ``function=`` to register directly.

    ``domain`` defaults to the calibrated domain in the domains file (built-ins) and must be given
    for any parameter that file does not list. ``category`` is ImageNet-C's category the
    corruption belongs to (:data:`~vcrbench.vocab.CORRUPTION_CATEGORIES`), else ``"other"``.
    Returns the function (decorator form) or the :class:`Corruption` (direct form). Everything
    about a corruption is given here (docs/architecture.md, "Add a corruption").
    """

    def register(fn: CorruptionFunction):
        if name in _REGISTRY and not replace_existing:
            raise CorruptionError(f"corruption {name!r} is already registered")
        corruption = build_corruption(
            name,
            fn,
            params,
            source=source,
            domain=domain,
            imagenet_c=imagenet_c,
            similarity_class=similarity_class,
            category=category,
            description=description or (inspect.getdoc(fn) or "").split("\n\n")[0],
        )
        _REGISTRY[name] = corruption
        return fn if function is None else corruption

    if function is not None:
        return register(function)
    return register


def build_corruption(
    name: str,
    function: CorruptionFunction,
    params: Sequence[Param],
    *,
    source: str,
    domain: Mapping[str, Sequence[float]] | None = None,
    imagenet_c: Sequence[Mapping[str, float]] | None = None,
    similarity_class: str | None = None,
    category: str = OTHER_CATEGORY,
    description: str = "",
) -> Corruption:
    """Assemble and check a :class:`Corruption` (domain from ``domain``, else the domains file)."""
    if not callable(function):
        raise CorruptionError(f"corruption {name!r}: {function!r} is not callable")
    params = tuple(params)
    names = [p.name for p in params]
    if not names or len(set(names)) != len(names):
        raise CorruptionError(f"corruption {name!r}: needs distinct parameter names, got {names}")
    if similarity_class not in (None, *SIMILARITY_CLASSES):
        raise CorruptionError(
            f"corruption {name!r}: similarity_class must be one of {SIMILARITY_CLASSES} or null, "
            f"not {similarity_class!r}"
        )
    if category not in (*CORRUPTION_CATEGORIES, OTHER_CATEGORY):
        raise CorruptionError(
            f"corruption {name!r}: category must be one of "
            f"{(*CORRUPTION_CATEGORIES, OTHER_CATEGORY)}, not {category!r}"
        )
    calibrated = calibrated_domains().get(name, {})
    given = dict(domain or {})
    dom, reason, calibration = {}, "", {}
    for p in params:
        if p.name in given:
            dom[p.name] = check_interval(name, p.name, given[p.name], p.limits)
        elif p.name in calibrated.get("domain", {}):
            dom[p.name] = check_interval(name, p.name, calibrated["domain"][p.name], p.limits)
            reason, calibration = calibrated.get("reason", ""), calibrated.get("measured", {})
        else:
            raise CorruptionError(f"corruption {name!r}: no domain given for parameter {p.name!r}")
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise CorruptionError(f"corruption {name!r}: domain for unknown parameter(s) {unknown}")
    corruption = Corruption(
        name=name,
        source=source,
        params=params,
        function=function,
        domain=dom,
        imagenet_c=None,
        similarity_class=similarity_class,
        description=description,
        reason=reason,
        category=category,
        calibration=calibration,
    )
    if imagenet_c is not None:
        severities = tuple(dict(s) for s in imagenet_c)
        if len(severities) != 5:
            raise CorruptionError(f"corruption {name!r}: imagenet_c needs 5 severities")
        for s in severities:
            corruption.validate(s, within="limits")
        corruption = replace(corruption, imagenet_c=severities)
    return corruption


def register_variant(
    corruption: str,
    variant: str,
    *,
    description: str,
    function: CorruptionFunction | None = None,
    params: Sequence[Param] = (),
) -> Variant:
    """Register ``variant`` of the registered ``corruption``: another function for its VCR sets
    (same parameters; None keeps its own) and/or parameters replaced by name (e.g. a discrete
    one, ``Param(grid=...)``). A config entry chooses it with ``variant: <name>``."""
    if corruption not in _REGISTRY:
        raise CorruptionError(f"variant {variant!r} of unknown corruption {corruption!r}")
    if variant in _VARIANTS.get(corruption, {}):
        raise CorruptionError(f"corruption {corruption!r} already has a variant {variant!r}")
    if function is not None and not callable(function):
        raise CorruptionError(
            f"variant {variant!r} of {corruption!r}: {function!r} is not callable"
        )
    names = set(_REGISTRY[corruption].param_names)
    replaced = {p.name: p for p in params}
    unknown = sorted(set(replaced) - names)
    if unknown:
        raise CorruptionError(
            f"variant {variant!r} of {corruption!r}: unknown parameter(s) {unknown}"
        )
    if function is None and not replaced:
        raise CorruptionError(f"variant {variant!r} of {corruption!r} changes nothing")
    out = Variant(variant, description, function, replaced)
    _VARIANTS.setdefault(corruption, {})[variant] = out
    return out


def list_variants(corruption: str) -> dict[str, str]:
    """The variants of ``corruption``: name -> description."""
    return {k: v.description for k, v in _VARIANTS.get(corruption, {}).items()}


def list_corruptions() -> list[str]:
    """Names of all registered corruptions, sorted."""
    return sorted(_REGISTRY)


def registered_category(name: str) -> str | None:
    """The category of the registered corruption ``name``, or None if none is registered."""
    corruption = _REGISTRY.get(name)
    return None if corruption is None else corruption.category


def unregister_corruption(name: str) -> None:
    """Remove ``name`` from the registry (a test's own corruption, after the test)."""
    if name not in _REGISTRY:
        raise CorruptionError(f"corruption {name!r} is not registered")
    del _REGISTRY[name]


def get_corruption(name: str, options: Mapping[str, Any] | None = None) -> Corruption:
    """The corruption ``name``, with the config entry ``options`` applied.

    ``options`` (all optional): ``domain_set`` (``calibrated``, the default, or ``paper``: the
    authors' toolbox ranges; a corruption the set does not list keeps its calibrated domain),
    ``domain`` ({param: [low, high]} overrides, applied after the set), ``reason`` (why),
    ``function`` ("package.module:function", a user corruption: with ``domain`` for each of its
    parameters, optional ``identity`` {param: value}, ``imagenet_c``, ``similarity_class``).
    ``variant`` (a built-in's variant, :func:`register_variant`; its domain set may give the
    variant's own domain). ``cast`` (``round``, the default, or ``truncate``: how the output
    becomes uint8, :data:`vcrbench.corruptions.values.CASTS`). ``n_samples`` is a sampling
    setting and is ignored here.
    """
    options = dict(options or {})
    unknown = sorted(set(options) - OPTION_KEYS)
    if unknown:
        raise CorruptionError(
            f"corruption {name!r}: unknown option(s) {unknown}; known: {sorted(OPTION_KEYS)}"
        )
    domain_set(options.get("domain_set") or DEFAULT_DOMAIN_SET)  # an unknown set raises
    cast = check_cast(options.get("cast", DEFAULT_CAST), name)
    if options.get("function"):
        if options.get("variant"):
            raise CorruptionError(
                f"corruption {name!r}: option 'variant' is only for built-in corruptions"
            )
        return replace(_user_corruption(name, options), cast=cast)
    if name not in _REGISTRY:
        raise CorruptionError(
            f"unknown corruption {name!r}{did_you_mean(name, _REGISTRY)}; "
            f"known: {', '.join(sorted(_REGISTRY))}; "
            "or give a user corruption as function: package.module:function"
        )
    for key in ("identity", "imagenet_c"):
        if key in options:
            raise CorruptionError(
                f"corruption {name!r}: option {key!r} is only for user corruptions (with function)"
            )
    corruption = _REGISTRY[name]
    if options.get("variant"):
        corruption = corruption.with_variant(_variant(name, options["variant"]))
    corruption = with_domain_set(corruption, options.get("domain_set") or DEFAULT_DOMAIN_SET)
    if "similarity_class" in options and options["similarity_class"] != corruption.similarity_class:
        raise CorruptionError(
            f"corruption {name!r}: similarity_class is {corruption.similarity_class!r} and "
            "cannot be changed for a built-in corruption"
        )
    if options.get("domain"):
        corruption = corruption.with_domain(options["domain"], options.get("reason", ""))
    elif options.get("reason"):
        corruption = replace(corruption, reason=options["reason"])
    return replace(corruption, cast=cast) if cast != corruption.cast else corruption


def _variant(name: str, variant: str) -> Variant:
    known = _VARIANTS.get(name, {})
    if variant not in known:
        raise CorruptionError(
            f"corruption {name!r} has no variant {variant!r}{did_you_mean(str(variant), known)}; "
            f"its variants: {', '.join(sorted(known)) or 'none'}"
        )
    return known[variant]


def load_function(path: str) -> CorruptionFunction:
    """Import ``"package.module:function"``; the error names the path."""
    if not isinstance(path, str) or path.count(":") != 1:
        raise CorruptionError(f"function {path!r} must be given as 'package.module:function'")
    module_name, attr = path.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CorruptionError(
            f"function {path!r}: cannot import module {module_name!r}: {exc}"
        ) from exc
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise CorruptionError(f"function {path!r}: module {module_name!r} has no {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise CorruptionError(f"function {path!r} is not callable")
    return obj


def _user_corruption(name: str, options: Mapping[str, Any]) -> Corruption:
    function = load_function(options["function"])
    domain = options.get("domain") or {}
    if not isinstance(domain, Mapping) or not domain:
        raise CorruptionError(
            f"corruption {name!r}: a user corruption needs `domain` ({{param: [low, high]}})"
        )
    identity = dict(options.get("identity") or {})
    unknown = sorted(set(identity) - set(domain))
    if unknown:
        raise CorruptionError(f"corruption {name!r}: identity for unknown parameter(s) {unknown}")
    params = []
    for key, interval in domain.items():
        lo, hi = check_interval(name, key, interval, (-math.inf, math.inf))
        params.append(Param(key, float(identity.get(key, lo)), doc="user parameter"))
    corruption = build_corruption(
        name,
        function,
        params,
        source="user",
        domain=domain,
        imagenet_c=options.get("imagenet_c"),
        similarity_class=options.get("similarity_class"),
        description=f"user corruption {options['function']}",
    )
    return replace(corruption, reason=options.get("reason", ""))
