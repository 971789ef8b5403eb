"""Source ``timm``: a timm model name, with timm's pretrained weights or a local checkpoint.

``pretrained: true`` (the default) lets timm fetch the weights (Hugging Face Hub or a URL, cached
under ``$HF_HOME``/``$TORCH_HOME``); where that is impossible the error names the model and what to
download. ``checkpoint: <file>`` loads local weights instead (see
:mod:`vcrbench.models.weights`). Preprocessing comes from the model's ``pretrained_cfg``.
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


def timm_preprocessing(net: torch.nn.Module, kwargs: dict | None = None) -> dict:
    """Input size, interpolation, mean and std of a timm model's ``pretrained_cfg``.

    An ``img_size`` given to the constructor (``kwargs``) wins over the pretrained_cfg's size,
    which describes the pretrained weights rather than the model built.
    """
    from timm.data import resolve_data_config

    cfg = resolve_data_config({}, model=net)
    _, h, w = cfg["input_size"]
    img_size = (kwargs or {}).get("img_size")
    if img_size is not None:
        h = w = max(img_size) if isinstance(img_size, list | tuple) else img_size
    return {
        "input_size": int(max(h, w)),
        "interpolation": cfg.get("interpolation"),
        "mean": tuple(cfg["mean"]),
        "std": tuple(cfg["std"]),
    }


def _where_weights(model_id: str) -> str:
    import timm.models

    try:
        cfg = timm.models.get_pretrained_cfg(model_id)
    except Exception:  # an unknown tag: timm's own error says so
        cfg = None
    if cfg is None:
        return "its weights"
    if getattr(cfg, "hf_hub_id", None):
        return f"the Hugging Face Hub repository {cfg.hf_hub_id}"
    return getattr(cfg, "url", None) or "its weights"


def create_timm(spec: ModelSpec, pretrained: bool) -> torch.nn.Module:
    import timm
    import torch

    if not timm.is_model(spec.id):
        raise ModelConfigError(
            f"model {spec.name!r}: timm has no model {spec.id!r} (see timm.list_models())"
        )
    try:
        return timm.create_model(spec.id, pretrained=pretrained, **dict(spec.kwargs))
    except Exception as exc:
        if not pretrained:
            raise ModelLoadError(
                f"model {spec.name!r}: timm cannot build {spec.id!r}: {exc}"
            ) from exc
        from huggingface_hub import constants

        raise WeightsUnavailableError(
            f"model {spec.name!r}: timm could not get the pretrained weights of {spec.id!r} from "
            f"{_where_weights(spec.id)} ({type(exc).__name__}: {str(exc)[:300]}). This machine "
            "may be offline: on a machine with network run "
            f"`python -c \"import timm; timm.create_model('{spec.id}', pretrained=True)\"` and "
            f"copy its Hugging Face cache (here {constants.HF_HUB_CACHE}) and torch hub "
            f"checkpoints (here {torch.hub.get_dir()}/checkpoints) to this machine, or download "
            "the weights file and set `checkpoint: <file>` in the model's entry"
        ) from exc


def parse_timm(entry, values: dict, where: str) -> None:
    """``pretrained`` (true or false); a checkpoint supplies the weights instead."""
    if "pretrained" in entry:
        if not isinstance(entry["pretrained"], bool):
            raise ModelConfigError(f"{where}: 'pretrained' must be true or false for timm")
        values["pretrained"] = entry["pretrained"]
    if values.get("checkpoint") is not None:
        values["pretrained"] = False  # the checkpoint supplies the weights


def timm_head(spec: ModelSpec, arch: str, pretrained: bool) -> tuple[list, int | None]:
    """timm knows ``arch`` (and its pretrained weights); the classes of its head."""
    import timm
    import timm.models
    import torch

    if not timm.is_model(arch):
        return [("id", f"timm has no model {arch!r}{did_you_mean(arch, timm.list_models())}")], None
    if pretrained:
        tagged = arch if "." in arch else None
        known = timm.list_pretrained(arch.split(".")[0] + "*")
        if tagged is not None and tagged not in known:
            return [
                ("id", f"timm has no pretrained weights {arch!r}; known: {', '.join(known[:12])}")
            ], None
        if not known and tagged is None:
            return [("pretrained", f"timm has no pretrained weights for {arch!r}")], None
    if "num_classes" in spec.kwargs:
        return [], int(spec.kwargs["num_classes"])
    if pretrained:
        cfg = timm.models.get_pretrained_cfg(arch)
        if cfg is not None and getattr(cfg, "num_classes", None):
            return [], int(cfg.num_classes)
    with torch.device("meta"):
        net = timm.create_model(arch, pretrained=False, **dict(spec.kwargs))
    return [], getattr(net, "num_classes", None)


def check_timm(spec: ModelSpec) -> tuple[list, int | None]:
    return timm_head(spec, spec.id, bool(spec.pretrained) and spec.checkpoint is None)


@register_source(
    "timm",
    keys={"pretrained", *CHECKPOINT_KEYS},
    parse=parse_timm,
    check=check_timm,
    fine_tuned=same_source,
    throughput_name=architecture_of_id,
)
def build_timm(spec: ModelSpec, device: torch.device) -> Built:
    pretrained = bool(spec.pretrained) and spec.checkpoint is None
    net = create_timm(spec, pretrained)
    preprocessing = timm_preprocessing(net, dict(spec.kwargs))
    info = {"library": "timm", "arch": spec.id, "pretrained": pretrained}
    if not pretrained and spec.checkpoint is None:
        log.warning("model %r: timm %s with random weights", spec.name, spec.id)
    num_classes = getattr(net, "num_classes", None)
    num_classes = num_classes if isinstance(num_classes, int) else None
    return Built(net, preprocessing, info, num_classes).apply_checkpoint(spec)
