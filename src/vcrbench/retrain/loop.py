"""The training loop: hyperparameters, an epoch's seeded batches, one pass of SGD.

Epoch e visits the images in a permutation drawn from ``(seed, "order", e)`` and reseeds torch's
generator (dropout, stochastic depth) from ``(seed, "epoch", e)`` inside
:func:`vcrbench.runtime.seeded`, so no epoch depends on how the previous ones ran.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from vcrbench import schema
from vcrbench.models import Classifier
from vcrbench.runtime import DTYPES, seeded
from vcrbench.seeding import derive_seed, rng


@dataclasses.dataclass(frozen=True)
class TrainSettings:
    """Hyperparameters of one fine-tuning: a run of ``retrain.runs`` (defaults: the schema's, the
    paper's) and the run's ``seed``."""

    epochs: int = schema.default_of("retrain.runs.*.epochs")
    lr: float = schema.default_of("retrain.runs.*.lr")
    momentum: float = schema.default_of("retrain.runs.*.momentum")
    weight_decay: float = schema.default_of("retrain.runs.*.weight_decay")
    batch_size: int = schema.default_of("retrain.runs.*.batch_size")
    seed: int = schema.default_of("seed")

    def __post_init__(self) -> None:
        if self.epochs < 1:
            raise ValueError(f"epochs must be at least 1, not {self.epochs}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {self.batch_size}")
        if not self.lr > 0:
            raise ValueError(f"lr must be positive, not {self.lr}")
        if not 0 <= self.momentum < 1:
            raise ValueError(f"momentum must be in [0, 1), not {self.momentum}")
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay must be non-negative, not {self.weight_decay}")


def epoch_batches(n: int, batch_size: int, seed: int, epoch: int) -> list[np.ndarray]:
    """Epoch ``epoch``'s batches: a seeded permutation cut into near-equal batches of at most
    ``batch_size`` (no batch of one, which BatchNorm cannot train on, unless n = 1)."""
    order = rng(seed, "retrain", "order", epoch).permutation(n)
    return np.array_split(order, math.ceil(n / batch_size))


def train_epoch(
    model: Classifier,
    optimizer: torch.optim.Optimizer,
    images: np.ndarray,
    labels: np.ndarray,
    epoch: int,
    settings: TrainSettings,
    precision: str,
    scaler: torch.amp.GradScaler | None = None,
    progress: bool = True,
    desc: str = "",
) -> dict:
    """One pass over the training images in the resolved autocast ``precision`` (``fp32``,
    ``bf16``, ``fp16``: :func:`finetune` resolves ``retrain.precision``); returns ``{epoch,
    n_images, loss, accuracy, lr}``."""
    device = model.device
    model.train()
    batches = epoch_batches(len(images), settings.batch_size, settings.seed, epoch)
    loss_sum = torch.zeros((), dtype=torch.float64, device=device)
    correct = torch.zeros((), dtype=torch.int64, device=device)
    amp = DTYPES.get(precision)
    pin = device.type == "cuda"
    seen = 0
    bar = tqdm(batches, desc=desc, unit="batch", mininterval=2.0, disable=not progress)
    with seeded(derive_seed(settings.seed, "retrain", "epoch", epoch), device):
        for i, idx in enumerate(bar):
            x = torch.from_numpy(images[idx])
            y = torch.from_numpy(labels[idx])
            if pin:
                x, y = x.pin_memory(), y.pin_memory()
            x, y = x.to(device, non_blocking=pin), y.to(device, non_blocking=pin)
            with torch.autocast(device.type, dtype=amp or torch.float32, enabled=amp is not None):
                logits = model(x)
            loss = F.cross_entropy(logits.float(), y)
            optimizer.zero_grad(set_to_none=True)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            else:
                loss.backward()
                optimizer.step()
            loss_sum += loss.detach().double() * len(idx)
            correct += (logits.detach().argmax(dim=1) == y).sum()
            seen += len(idx)
            if i % 10 == 9 or i == len(batches) - 1:
                bar.set_postfix(loss=f"{float(loss_sum) / seen:.4f}", refresh=False)
    bar.close()
    n = len(images)
    return {
        "epoch": int(epoch),
        "n_images": int(n),
        "loss": float(loss_sum) / n,
        "accuracy": float(correct) / n,
        "lr": float(settings.lr),
    }
