"""Source ``checkpoint``: a local weights file and the architecture it belongs to.

This covers RobustBench-style and paper-specific weights (SIN, NoisyMix, DeepAugment, DeiT robust
variants, adversarially trained models). ``library`` says where the architecture comes from:
``timm`` (default; ``id`` is a timm model name), ``torchvision`` (``id`` is a
``torchvision.models`` name) or ``python`` (``id`` is ``package.module:function``, called with
``kwargs``, for architectures that neither library has, e.g. RobustBench's ConvStem models). The
accepted file formats are listed in :mod:`vcrbench.models.weights`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

from vcrbench.errors import ModelConfigError, ModelLoadError
from vcrbench.models.sources import Built, register_source
from vcrbench.models.spec import ModelSpec
from vcrbench.models.timm_models import build_timm
from vcrbench.models.torchvision_models import build_torchvision


def _python_factory(spec: ModelSpec) -> torch.nn.Module:
    import torch

    module_name, _, attr = spec.id.partition(":")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ModelConfigError(
            f"model {spec.name!r}: cannot import the architecture {spec.id!r}: {exc}"
        ) from None
    try:
        net = factory(**dict(spec.kwargs))
    except Exception as exc:
        raise ModelLoadError(f"model {spec.name!r}: {spec.id}(**kwargs) failed: {exc}") from exc
    if not isinstance(net, torch.nn.Module):
        raise ModelLoadError(f"model {spec.name!r}: {spec.id} returned {type(net).__name__}")
    return net


@register_source("checkpoint")
def build_checkpoint(spec: ModelSpec, device: torch.device) -> Built:
    if spec.library == "timm":
        built = build_timm(spec.override(pretrained=False), device)
    elif spec.library == "torchvision":
        built = build_torchvision(spec.override(weights=None), device)
    else:
        net = _python_factory(spec)
        info = {"library": "python", "arch": spec.id}
        built = Built(net, {}, info).apply_checkpoint(spec)
    built.info["source"] = "checkpoint"
    return built
