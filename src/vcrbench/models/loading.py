"""Building a model from its entry: :func:`load_model` (imports torch and the model's library).

The entry is validated (:class:`~vcrbench.models.spec.ModelSpec`), its source's builder makes the
bare network (:mod:`vcrbench.models.sources`), and the result is wrapped in a
:class:`~vcrbench.models.classifier.Classifier` with its preprocessing, on the device, in eval
mode and channels_last; its head must predict the entry's label space.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

import torch

from vcrbench.errors import ModelConfigError, ModelLoadError
from vcrbench.models.classifier import Classifier
from vcrbench.models.sources import SOURCES, Built
from vcrbench.models.spec import (
    IMAGENET_MEAN,
    IMAGENET_STD,
    INTERPOLATIONS,
    TEST_IMAGE_SIZE,
    ModelSpec,
    Preprocessing,
)
from vcrbench.runtime import resolve_device

log = logging.getLogger(__name__)


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
    built = SOURCES[spec.source].build(spec, device)
    preprocessing = _preprocessing(spec, built)
    info = {"spec": spec.to_config(), **built.info, "preprocessing": asdict(preprocessing)}
    return wrap(
        spec.name, built.net, preprocessing, spec.output_space, info, device, built.num_classes,
        hint="set label_space in its entry to the head's classes (e.g. {name: cub200, "
        "num_classes: 200}) or give it a matching head",
    )  # fmt: skip


def wrap(
    name: str,
    net: torch.nn.Module,
    preprocessing: Preprocessing,
    space,
    info: dict,
    device: torch.device,
    num_classes: int | None = None,
    *,
    hint: str,
) -> Classifier:
    """``net`` as a :class:`Classifier` of label space ``space`` on ``device``, in eval mode,
    channels_last. Its classes (``num_classes``, else one forward pass of a blank image) must be
    the label space's: else a :class:`ModelLoadError` naming both, ending with ``hint``."""
    model = Classifier(name, net, preprocessing, space, info=info)
    model = model.eval().to(device=device, memory_format=torch.channels_last)
    if num_classes is None:
        size = model.preprocessing.input_size
        probe = torch.zeros((1, size, size, 3), dtype=torch.uint8, device=device)
        with torch.inference_mode():
            out = model(probe)
        num_classes = int(out.shape[-1]) if out.ndim == 2 and out.shape[0] == 1 else None
        if num_classes is None:
            raise ModelLoadError(
                f"model {name!r} returned logits of shape {tuple(out.shape)} for one image; "
                f"expected (1, {space.num_classes})"
            )
    if num_classes != space.num_classes:
        raise ModelLoadError(
            f"model {name!r} outputs {num_classes} classes but its label space "
            f"{space.name!r} has {space.num_classes}; {hint}"
        )
    return model
