"""Source ``torchvision``: a ``torchvision.models`` name with a weights enum, or a local checkpoint.

``weights`` is an enum member name (``IMAGENET1K_V1``, ``DEFAULT``, or the full
``ResNet50_Weights.IMAGENET1K_V2``); missing means ``DEFAULT``, ``null`` random weights. Weights
download to ``$TORCH_HOME/hub/checkpoints``; offline the error names the URL and that folder.
Preprocessing comes from the weights' own transforms (crop size, interpolation, mean, std).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

from vcrbench.errors import (
    ModelConfigError,
    ModelLoadError,
    WeightsUnavailableError,
    did_you_mean,
)
from vcrbench.models.sources import Built, architecture_of_id, register_source, same_source
from vcrbench.models.spec import CHECKPOINT_KEYS, ModelSpec

log = logging.getLogger(__name__)


def resolve_weights(spec: ModelSpec):
    """The torchvision weights enum member named by the entry (None for random weights)."""
    import torchvision

    if spec.weights is None or spec.checkpoint is not None:
        return None
    if "." not in spec.weights and spec.id not in torchvision.models.list_models():
        raise ModelConfigError(
            f"model {spec.name!r}: torchvision has no model {spec.id!r}"
            f"{did_you_mean(spec.id, torchvision.models.list_models())} "
            "(see torchvision.models.list_models())"
        )
    try:
        if "." in spec.weights:
            return torchvision.models.get_weight(spec.weights)
        return torchvision.models.get_model_weights(spec.id)[spec.weights]
    except (KeyError, ValueError, AttributeError):
        try:
            known = [w.name for w in torchvision.models.get_model_weights(spec.id)]
        except (KeyError, ValueError, AttributeError):
            known = []
        if not known:
            raise ModelConfigError(
                f"model {spec.name!r}: torchvision has no pretrained weights for {spec.id!r}; "
                "set `weights: null` (random weights) or `checkpoint: <file>`"
            ) from None
        raise ModelConfigError(
            f"model {spec.name!r}: torchvision has no weights {spec.weights!r} for {spec.id!r}; "
            f"known: {', '.join(['DEFAULT', *known])}"
        ) from None


def create_torchvision(spec: ModelSpec, weights) -> torch.nn.Module:
    import torch
    import torchvision

    if spec.id not in torchvision.models.list_models():
        raise ModelConfigError(
            f"model {spec.name!r}: torchvision has no model {spec.id!r} "
            "(see torchvision.models.list_models())"
        )
    try:
        return torchvision.models.get_model(spec.id, weights=weights, **dict(spec.kwargs))
    except Exception as exc:
        if weights is None:
            raise ModelLoadError(
                f"model {spec.name!r}: torchvision cannot build {spec.id!r}: {exc}"
            ) from exc
        raise WeightsUnavailableError(
            f"model {spec.name!r}: torchvision could not get the weights {weights} from "
            f"{weights.url} ({type(exc).__name__}: {str(exc)[:300]}). This machine may be "
            f"offline: download that file into {torch.hub.get_dir()}/checkpoints/ (keeping its "
            "name), or set `checkpoint: <file>` in the model's entry"
        ) from exc


def weights_preprocessing(weights) -> dict:
    if weights is None:
        return {}
    t = weights.transforms()
    crop = getattr(t, "crop_size", None)
    out = {
        "input_size": int(crop[0]) if crop else None,
        "interpolation": getattr(getattr(t, "interpolation", None), "value", None),
        "mean": tuple(t.mean) if hasattr(t, "mean") else None,
        "std": tuple(t.std) if hasattr(t, "std") else None,
    }
    return {k: v for k, v in out.items() if v is not None}


def parse_torchvision(entry, values: dict, where: str) -> None:
    """``weights`` (an enum member name, or null); a checkpoint supplies the weights instead."""
    if "weights" in entry:
        if entry["weights"] is not None and not isinstance(entry["weights"], str):
            raise ModelConfigError(f"{where}: 'weights' must be a weights enum name or null")
        values["weights"] = entry["weights"]
    if values.get("checkpoint") is not None:
        values["weights"] = None


def check_torchvision(spec: ModelSpec) -> tuple[list, int | None]:
    """torchvision knows the model and its weights; the classes of its head."""
    import torchvision

    if spec.id not in torchvision.models.list_models():
        known = torchvision.models.list_models()
        return [("id", f"torchvision has no model {spec.id!r}{did_you_mean(spec.id, known)}")], None
    try:
        weights = resolve_weights(spec)
    except ModelConfigError as exc:
        return [("weights", str(exc).split(": ", 1)[-1])], None
    if weights is not None:
        return [], len(weights.meta["categories"])
    return [], int(spec.kwargs.get("num_classes", 1000))


@register_source(
    "torchvision",
    keys={"weights", *CHECKPOINT_KEYS},
    parse=parse_torchvision,
    check=check_torchvision,
    fine_tuned=same_source,
    throughput_name=architecture_of_id,
)
def build_torchvision(spec: ModelSpec, device: torch.device) -> Built:
    weights = resolve_weights(spec)
    net = create_torchvision(spec, weights)
    preprocessing = weights_preprocessing(weights)
    info = {"library": "torchvision", "arch": spec.id, "weights": str(weights) if weights else None}
    # torchvision's classifiers all take num_classes (default 1000); pretrained weights fix it.
    num_classes = (
        len(weights.meta["categories"])
        if weights is not None
        else int(spec.kwargs.get("num_classes", 1000))
    )
    if weights is None and spec.checkpoint is None:
        log.warning("model %r: torchvision %s with random weights", spec.name, spec.id)
    return Built(net, preprocessing, info, num_classes).apply_checkpoint(spec)
