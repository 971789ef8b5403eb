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
from vcrbench.models.sources import Built, architecture_of_id, register_source, same_source
from vcrbench.models.spec import CHECKPOINT_KEYS, CHECKPOINT_LIBRARIES, ModelSpec
from vcrbench.models.timm_models import build_timm, timm_head
from vcrbench.models.torchvision_models import build_torchvision, check_torchvision


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


def parse_checkpoint(entry, values: dict, where: str) -> None:
    """``checkpoint`` is required; ``library`` (timm, torchvision or python) says where the
    architecture comes from, with ``python`` the id is ``package.module:function``."""
    if values.get("checkpoint") is None:
        raise ModelConfigError(f"{where}: source 'checkpoint' needs 'checkpoint' (a file path)")
    library = entry.get("library", "timm")
    if library not in CHECKPOINT_LIBRARIES:
        raise ModelConfigError(f"{where}: library {library!r} is not one of {CHECKPOINT_LIBRARIES}")
    if library == "python" and ":" not in values["id"]:
        raise ModelConfigError(
            f"{where}: with library 'python' the id is 'package.module:function', "
            f"not {values['id']!r}"
        )
    values["library"] = library
    values["pretrained"] = False


def check_checkpoint(spec: ModelSpec) -> tuple[list, int | None]:
    """The architecture exists in its library (a python one imports); the classes of its head."""
    if spec.library == "timm":
        return timm_head(spec, spec.id, False)
    if spec.library == "torchvision":
        return check_torchvision(spec)
    module, _, attr = spec.id.partition(":")
    try:
        getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        return [("id", f"cannot import {spec.id!r}: {exc}")], None
    return [], None


def checkpoint_architecture(entry) -> str:
    """A timm or torchvision architecture's name; a python one is ``checkpoint:id``."""
    if entry.get("library") in ("timm", "torchvision"):
        return architecture_of_id(entry)
    return f"checkpoint:{entry.get('id', '')}"


@register_source(
    "checkpoint",
    keys={"library", *CHECKPOINT_KEYS},
    parse=parse_checkpoint,
    check=check_checkpoint,
    fine_tuned=same_source,
    throughput_name=checkpoint_architecture,
)
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
