"""The common model wrapper: uint8 test images in, logits in the model's label space out.

Every model, whatever its source, is wrapped in a :class:`Classifier` that carries its own
preprocessing (:class:`Preprocess`), so the inference job hands it the uint8 images of the test
sets as they are stored and never needs to know where the model came from. Preprocessing runs on
the model's device (on a GPU it costs little next to the forward pass).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from vcrbench.labels import LabelSpace
from vcrbench.models.spec import Preprocessing


class Preprocess(nn.Module):
    """uint8 NxHxWx3 images -> normalised float Nx3xSxS (channels_last), as
    :class:`Preprocessing`."""

    def __init__(self, config: Preprocessing) -> None:
        super().__init__()
        self.config = config
        # Fold the 1/255 scaling into mean/std: x_norm = (x_255 - 255*mean) / (255*std).
        mean = torch.tensor(config.mean, dtype=torch.float32).view(1, 3, 1, 1) * 255.0
        std = torch.tensor(config.std, dtype=torch.float32).view(1, 3, 1, 1) * 255.0
        self.register_buffer("mean", mean, persistent=False)
        self.register_buffer("std", std, persistent=False)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        if images.dtype != torch.uint8 or images.ndim != 4 or images.shape[-1] != 3:
            raise ValueError(
                f"expected a uint8 batch of shape (N, H, W, 3), got {images.dtype} "
                f"{tuple(images.shape)}"
            )
        # NHWC memory seen as NCHW is already channels_last: no copy until the float conversion.
        x = images.permute(0, 3, 1, 2).float()
        cfg = self.config
        h, w = x.shape[-2:]
        if cfg.crop < 1.0:
            ch, cw = max(1, round(h * cfg.crop)), max(1, round(w * cfg.crop))
            top, left = (h - ch) // 2, (w - cw) // 2
            x = x[..., top : top + ch, left : left + cw]
            h, w = ch, cw
        size = cfg.input_size
        if (h, w) != (size, size):
            x = F.interpolate(
                x,
                size=(size, size),
                mode=cfg.interpolation,
                antialias=cfg.interpolation != "nearest",
                **({} if cfg.interpolation == "nearest" else {"align_corners": False}),
            )
            # As a PIL resize of a uint8 image would: bicubic overshoots, and PIL rounds.
            x = x.round_().clamp_(0.0, 255.0)
        x = (x - self.mean) / self.std
        return x.contiguous(memory_format=torch.channels_last)


class Classifier(nn.Module):
    """A model with its preprocessing and label space.

    ``forward(images)`` takes a uint8 batch (N, H, W, 3) on the model's device and returns logits
    (N, num_classes). ``net`` is the bare network (normalised float input), ``preprocess`` the
    :class:`Preprocess` in front of it.
    """

    def __init__(
        self,
        name: str,
        net: nn.Module,
        preprocessing: Preprocessing,
        label_space: LabelSpace,
        info: dict | None = None,
    ) -> None:
        super().__init__()
        self.name = name
        self.net = net
        self.preprocess = Preprocess(preprocessing)
        self.label_space = label_space
        #: Provenance (source, id, weights file …), stored in prediction files' metadata.
        self.info = dict(info or {})

    @property
    def preprocessing(self) -> Preprocessing:
        return self.preprocess.config

    @property
    def num_classes(self) -> int:
        return self.label_space.num_classes

    @property
    def parameter_count(self) -> int:
        """Parameters of the network (each shared tensor once; buffers not counted)."""
        return int(sum(p.numel() for p in self.net.parameters()))

    @property
    def device(self) -> torch.device:
        for t in self.parameters():
            return t.device
        return self.preprocess.mean.device

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        logits = self.net(self.preprocess(images))
        if not isinstance(logits, torch.Tensor):
            raise TypeError(
                f"model {self.name!r} returned {type(logits).__name__}, not a tensor of logits; "
                "wrap it so that it returns (N, num_classes) logits"
            )
        return logits
