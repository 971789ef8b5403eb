"""Networks of the paper's models that neither timm nor torchvision provides, and the zero-shot
CLIP classifier that the ``clip`` source builds.

Used through the ``checkpoint`` source with ``library: python``, e.g.
``id: vcrbench.models.architectures:convnext_convstem``.

ConvNeXt with a convolutional stem (Singh, Croce & Hein, "Revisiting adversarial training for
ImageNet", NeurIPS 2023; RobustBench's ``Singh2023Revisiting_ConvNeXt-L-ConvStem``). RobustBench
defines it in ``robustbench/model_zoo/architectures/convstem_models.py`` (MIT licence): timm's
ConvNeXt with its patchify stem replaced by three 3x3 convolutions (strides 2, 2, 1), each followed
by a channels-first LayerNorm and GELU. The robustbench package itself pins timm 1.0.9, older than
this project's timm, so the few lines are reproduced here with the same parameter names, so that
RobustBench's checkpoint loads unchanged. RobustBench builds this model without an input
normaliser: it takes pixels in [0, 1] (``mean: [0, 0, 0]``, ``std: [1, 1, 1]`` in its entry).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class ConvStem(nn.Module):
    """RobustBench's ``ConvBlock3``: 3 -> w -> 1.5w -> 2w channels, overall stride 4."""

    def __init__(self, width: int) -> None:
        super().__init__()
        from timm.layers import LayerNorm2d

        mid, out = int(width * 1.5), width * 2
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, kernel_size=3, stride=2, padding=1),
            LayerNorm2d(width, eps=1e-6),
            nn.GELU(),
            nn.Conv2d(width, mid, kernel_size=3, stride=2, padding=1),
            LayerNorm2d(mid, eps=1e-6),
            nn.GELU(),
            nn.Conv2d(mid, out, kernel_size=3, stride=1, padding=1),
            LayerNorm2d(out, eps=1e-6),
            nn.GELU(),
        )

    def forward(self, x):
        return self.stem(x)


def convnext_convstem(arch: str = "convnext_large", stem_width: int = 96, **kwargs) -> nn.Module:
    """timm ConvNeXt ``arch`` with a :class:`ConvStem` (``convnext_large`` + 96: Singh et al.)."""
    import timm

    model = timm.create_model(arch, pretrained=False, **kwargs)
    channels = model.stages[0].blocks[0].conv_dw.in_channels
    if channels != 2 * stem_width:
        raise ValueError(
            f"{arch}'s first stage takes {channels} channels; the ConvStem gives 2 x stem_width = "
            f"{2 * stem_width}"
        )
    model.stem = ConvStem(stem_width)
    return model


class ClipZeroShot(nn.Module):
    """CLIP image tower + fixed zero-shot head: logits = scale * cos(image, class prompt)."""

    def __init__(self, visual: nn.Module, class_embeddings: torch.Tensor, logit_scale: float):
        super().__init__()
        self.visual = visual
        self.register_buffer("class_embeddings", class_embeddings)  # (embed_dim, num_classes)
        self.logit_scale = float(logit_scale)
        self.num_classes = int(class_embeddings.shape[1])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = F.normalize(self.visual(x), dim=-1)
        return self.logit_scale * features @ self.class_embeddings.to(features.dtype)
