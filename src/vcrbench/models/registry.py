"""The registry of model sources and :func:`load_model`, which builds a model from its entry.

A source is a function ``build(spec, device) -> Built`` registered under a name with
:func:`register_source`; the source modules (``timm_models``, ``torchvision_models``, …) register
themselves when this module is imported. Building is lazy: a :class:`ModelZoo` validates every
entry of the config at once (cheap) and builds a model only when it is asked for.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from torch import nn

from vcrbench.models.classifier import Classifier
from vcrbench.models.spec import (
    CHECKPOINT_LIBRARIES,
    HUB_SOURCES,
    IMAGENET_MEAN,
    IMAGENET_STD,
    INTERPOLATIONS,
    PRECISIONS,
    TEST_IMAGE_SIZE,
    ModelConfigError,
    ModelLoadError,
    ModelSpec,
    Preprocessing,
)

log = logging.getLogger(__name__)


@dataclass
class Built:
    """What a source returns: the bare network, its own preprocessing, provenance."""

    net: nn.Module
    #: Preprocessing the weights were trained with (keys of :class:`Preprocessing`), if known.
    preprocessing: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    #: Number of output classes if the source knows it (else found by a forward pass).
    num_classes: int | None = None

    def apply_checkpoint(self, spec: ModelSpec) -> Built:
        """Load ``spec.checkpoint`` (if set) into the net; a RobustBench normaliser sets mean/std."""
        if spec.checkpoint is None:
            return self
        from vcrbench.models.checkpoints import load_weights

        normaliser = load_weights(
            self.net,
            spec.checkpoint,
            spec.name,
            strict=spec.strict,
            use_ema=spec.use_ema,
            url=spec.url,
        )
        if normaliser is not None:
            self.preprocessing["mean"], self.preprocessing["std"] = normaliser
        self.info["checkpoint"] = str(spec.checkpoint)
        return self


SourceBuilder = Callable[[ModelSpec, torch.device], Built]
SOURCES: dict[str, SourceBuilder] = {}


def register_source(name: str) -> Callable[[SourceBuilder], SourceBuilder]:
    """Decorator: register ``build(spec, device) -> Built`` as the model source ``name``."""

    def deco(fn: SourceBuilder) -> SourceBuilder:
        SOURCES[name] = fn
        return fn

    return deco


def list_sources() -> list[str]:
    return list(SOURCES)


def resolve_device(device: str | torch.device | None = "auto") -> torch.device:
    """``auto`` (or None) is the GPU where there is one, else the CPU."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was asked for but torch sees no GPU here")
    return device


def _preprocessing(spec: ModelSpec, built: Built) -> Preprocessing:
    values: dict[str, Any] = {
        "input_size": TEST_IMAGE_SIZE,
        "interpolation": "bilinear",
        "mean": IMAGENET_MEAN,
        "std": IMAGENET_STD,
        "crop": 1.0,
    }
    own = dict(built.preprocessing)
    if own.get("interpolation") not in (None, *INTERPOLATIONS):
        log.warning(
            "model %r: interpolation %r is not supported here, using bicubic",
            spec.name,
            own["interpolation"],
        )
        own["interpolation"] = "bicubic"
    values.update({k: v for k, v in own.items() if v is not None})
    for key in ("input_size", "interpolation", "mean", "std", "crop"):
        if getattr(spec, key) is not None:
            values[key] = getattr(spec, key)
    values["mean"] = tuple(float(v) for v in values["mean"])
    values["std"] = tuple(float(v) for v in values["std"])
    try:
        return Preprocessing(**values)
    except ValueError as exc:
        raise ModelConfigError(f"model {spec.name!r}: {exc}") from None


def load_model(
    spec: ModelSpec | tuple[str, Mapping], device: str | torch.device | None = "cpu"
) -> Classifier:
    """Build the model of ``spec`` on ``device``, in eval mode, channels_last.

    Raises :class:`~vcrbench.models.spec.ModelConfigError` for a bad entry,
    :class:`~vcrbench.models.spec.WeightsUnavailableError` when weights are neither on disk nor
    downloadable (the message says what to download), and
    :class:`~vcrbench.models.spec.ModelLoadError` when the weights or the head do not fit.
    """
    if not isinstance(spec, ModelSpec):
        spec = ModelSpec.from_config(*spec)
    device = resolve_device(device)
    if spec.source not in SOURCES:
        raise ModelConfigError(
            f"model {spec.name!r}: unknown source {spec.source!r}; known: {', '.join(SOURCES)}"
        )
    built = SOURCES[spec.source](spec, device)
    space = spec.output_space
    preprocessing = _preprocessing(spec, built)
    model = Classifier(
        spec.name,
        built.net,
        preprocessing,
        space,
        info={"spec": spec.to_config(), **built.info, "preprocessing": asdict(preprocessing)},
    )
    model = model.eval().to(device=device, memory_format=torch.channels_last)
    num_classes = built.num_classes
    if num_classes is None:
        size = model.preprocessing.input_size
        probe = torch.zeros((1, size, size, 3), dtype=torch.uint8, device=device)
        with torch.inference_mode():
            num_classes = int(model(probe).shape[-1])
    if num_classes != space.num_classes:
        raise ModelLoadError(
            f"model {spec.name!r} outputs {num_classes} classes but its label space "
            f"{space.name!r} has {space.num_classes}; set label_space in its entry to the head's "
            "classes (e.g. {name: cub200, num_classes: 200}) or give it a matching head"
        )
    return model


def entry_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of one ``models:`` entry, for the config schema.

    It checks key names and value types; which keys apply to which source, and the values that
    depend on the installed libraries, are checked by :meth:`ModelSpec.from_config`.
    """
    string = {"type": "string"}
    triple = {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3}
    flag = {"type": "boolean"}
    properties: dict[str, Any] = {
        "source": {"enum": list(SOURCES)},
        "id": string,
        "family": string,
        "url": string,
        "notes": string,
        "kwargs": {"type": "object"},
        "label_space": {
            "oneOf": [
                {"const": "imagenet1k"},
                {
                    "type": "object",
                    "required": ["name"],
                    "additionalProperties": False,
                    "properties": {
                        "name": string,
                        "num_classes": {"type": "integer", "minimum": 1},
                        "class_names": {"oneOf": [string, {"type": "array", "items": string}]},
                    },
                },
            ]
        },
        "input_size": {"type": "integer", "minimum": 1},
        "interpolation": {"enum": list(INTERPOLATIONS)},
        "mean": triple,
        "std": triple,
        "crop": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "precision": {"enum": list(PRECISIONS)},
        "batch_size": {"type": "integer", "minimum": 1},
        "pretrained": {"type": ["boolean", "string"]},
        "weights": {"type": ["string", "null"]},
        "checkpoint": string,
        "use_ema": flag,
        "strict": flag,
        "library": {"enum": list(CHECKPOINT_LIBRARIES)},
        "repo": string,
        "hub_source": {"enum": list(HUB_SOURCES)},
        "prompt": string,
        "class_names": {"oneOf": [{"enum": ["openai", "wordnet"]}, {"type": "array"}]},
    }
    return {
        "type": "object",
        "required": ["source", "id"],
        "additionalProperties": False,
        "properties": properties,
    }


class ModelZoo(Mapping[str, ModelSpec]):
    """The ``models:`` mapping of a config, validated at once and built on demand.

    ``zoo[name]`` is the :class:`ModelSpec`; ``zoo.load(name, device)`` builds the model.
    """

    def __init__(self, entries: Mapping[str, Mapping]) -> None:
        if not isinstance(entries, Mapping):
            raise ModelConfigError("models: expected a mapping of model name -> entry")
        self._specs = {name: ModelSpec.from_config(name, e) for name, e in entries.items()}

    def __getitem__(self, name: str) -> ModelSpec:
        try:
            return self._specs[name]
        except KeyError:
            raise ModelConfigError(
                f"unknown model {name!r}; configured: {', '.join(self._specs)}"
            ) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def load(self, name: str, device: str | torch.device | None = "cpu") -> Classifier:
        return load_model(self[name], device)


# Importing the source modules registers them (they import only this module's names).
from vcrbench.models import (  # noqa: E402, F401
    checkpoint_models,
    clip_models,
    efficientnet_lite,
    hub_models,
    timm_models,
    torchvision_models,
)
