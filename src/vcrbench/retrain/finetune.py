"""Fine-tuning a model on VCR-generated images (the paper's Section 4.3): :func:`finetune` loads the
training images (:mod:`~vcrbench.retrain.data`), resumes from the newest matching checkpoint
(:mod:`~vcrbench.retrain.resume`), runs the loop (:mod:`~vcrbench.retrain.loop`) and saves the
weights (:mod:`~vcrbench.retrain.save`).

All parameters are trained, with plain SGD (learning rate 0.001, momentum 0.9 in the paper) and
cross-entropy, for a given number of epochs. The images are the training shards' uint8 images,
fed through the base model's own preprocessing, exactly as at evaluation.

Determinism. Epoch e visits the images in a permutation drawn from ``(seed, "order", e)`` and
reseeds torch's generator (dropout, stochastic depth) from ``(seed, "epoch", e)`` inside
:func:`torch.random.fork_rng`, so no epoch depends on how the previous ones ran and no global random
state leaks out; ``torch.use_deterministic_algorithms`` is on for the duration (strict on the
CPU, warn-only on a GPU, where some kernels have no deterministic version). On the CPU, training
interrupted after any epoch and resumed from its checkpoint ends with the same weights, to the
bit, as an uninterrupted run (tested).

Checkpoints. After every epoch the network's and the optimiser's state go to
``checkpoint_dir/epoch-NNN.pt`` (atomically, :mod:`vcrbench.retrain.resume`); a new call with
the same inputs resumes after the newest valid one. The outputs (weights, history CSV, plot) are
written only at the end. Raising ``epochs`` later continues from the last checkpoint.

The weights file. ``{"state_dict": ..., "vcrbench": ...}``: the network's own keys plus the base
model's input normalisation as RobustBench-style ``normalize.*`` tensors, which
:mod:`vcrbench.models.weights` turns back into the model's mean/std, and the provenance as a
JSON string (not nested Python objects, whose pickled bytes depend on which objects happen to be
shared). So the fine-tuned model's entry (:func:`vcrbench.retrain.derived_entry`) rebuilds the
base's preprocessing whatever source the base came from (a RobustBench normaliser, the weights'
own transforms). Before training, the entry is built once with the base's own weights and must
give the base's preprocessing and logits; otherwise the job stops before any training, naming the
difference.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable, Sequence

import pandas as pd
import torch

from vcrbench import runtime
from vcrbench.errors import RetrainError
from vcrbench.labels import check_compatible, get_label_space
from vcrbench.models import ModelSpec, load_model
from vcrbench.retrain import resume
from vcrbench.retrain.data import files_digest, load_training_set
from vcrbench.retrain.history import write_history
from vcrbench.retrain.loop import TrainSettings, train_epoch
from vcrbench.retrain.resume import fingerprint
from vcrbench.retrain.save import check_rebuild, save_weights
from vcrbench.runtime import deterministic, resolve_device, seeded
from vcrbench.seeding import derive_seed
from vcrbench.vocab import PRECISIONS

log = logging.getLogger(__name__)


def finetune(
    base: ModelSpec,
    train_paths: Sequence[str | os.PathLike],
    model_path: str | os.PathLike,
    history_path: str | os.PathLike,
    plot_path: str | os.PathLike,
    checkpoint_dir: str | os.PathLike,
    settings: TrainSettings,
    *,
    derived: ModelSpec | None = None,
    device: str | torch.device | None,
    precision: str,
    keep_checkpoints: int | None = None,
    label_space: str | dict | None = None,
    progress: bool = True,
    on_epoch_end: Callable[[int, dict], None] | None = None,
) -> pd.DataFrame:
    """Fine-tune ``base`` on the training shards ``train_paths``; write the weights, the
    history (CSV) and its plot (PNG). Resumes from ``checkpoint_dir`` when it holds a valid
    checkpoint of the same training. Returns the history (one row per epoch).

    Parameters
    ----------
    base : ModelSpec
        The model to fine-tune (all its parameters).
    derived : ModelSpec, optional
        The fine-tuned model's entry as the workflow will evaluate it; checked before training
        to rebuild ``base`` exactly (:func:`check_rebuild`).
    settings : TrainSettings
        epochs, lr, momentum, weight_decay, batch_size, seed.
    device, precision
        ``retrain.device`` (``auto``: the GPU where there is one) and ``retrain.precision``
        (``auto``: bf16 on a GPU that has it, else fp32; the base entry's own wins).
    keep_checkpoints : int or None
        Keep only the newest N per-epoch checkpoints (None: all).
    label_space : str or dict, optional
        The label space of the training labels (the dataset's); the model must predict it.
    on_epoch_end : callable(epoch, row), optional
        Called after each epoch's checkpoint is written.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    device = resolve_device(device)
    images, labels = load_training_set(train_paths)
    log.info(
        "training set: %d images of %s from %d shard(s)",
        len(images),
        images.shape[1:],
        len(train_paths),
    )
    with deterministic(device):
        model, precision = _prepare_model(
            base, derived, images, labels, settings, device, precision, label_space, checkpoint_dir
        )
        optimizer = _optimizer(model, settings)
        scaler = torch.amp.GradScaler(device.type) if precision == "fp16" else None
        key = fingerprint(base, settings, files_digest(train_paths))
        start, history = _resume(checkpoint_dir, key, settings, device, model, optimizer, scaler)
        name = derived.name if derived is not None else f"{base.name} (fine-tuned)"
        log.info(
            "fine-tuning %s -> %s on %s, %s, epochs %d..%d of %d, %s",
            base.name,
            name,
            device,
            precision,
            start + 1,
            settings.epochs,
            settings.epochs,
            settings,
        )
        for epoch in range(start + 1, settings.epochs + 1):
            row = _epoch(
                model, optimizer, scaler, images, labels, epoch, settings, precision, progress
            )
            history.append(row)
            _checkpoint(checkpoint_dir, epoch, key, model, optimizer, scaler, history)
            resume.prune(checkpoint_dir, keep_checkpoints)
            if on_epoch_end is not None:
                on_epoch_end(epoch, row)
    provenance = _provenance(
        base, name, settings, precision, key, len(images), train_paths, model, history
    )
    return _write_outputs(model, history, provenance, model_path, history_path, plot_path)


def _provenance(base, name, settings, precision, key, n_images, train_paths, model, history):
    """What the weights file records of its training: the base, the settings and precision, the
    fingerprint of the training, its data and the preprocessing, and the history."""
    return {
        "base": base.name,
        "base_entry": base.to_config(),
        "model": name,
        "settings": dataclasses.asdict(settings),
        "precision": precision,
        "fingerprint": key,
        "training_images": int(n_images),
        "training_shards": [str(p) for p in train_paths],
        "preprocessing": dataclasses.asdict(model.preprocessing),
        "history": history,
    }


def _write_outputs(model, history, provenance, model_path, history_path, plot_path):
    """Write the fine-tuned weights with their ``provenance``, the history (CSV) and its plot;
    returns the history table."""
    table = pd.DataFrame(history, columns=["epoch", "n_images", "loss", "accuracy", "lr"])
    save_weights(model, model_path, provenance)
    title = f"{provenance['model']}: fine-tuning on VCR images"
    write_history(table, history_path, plot_path, title=title)
    return table


def _optimizer(model, settings: TrainSettings) -> torch.optim.SGD:
    """Plain SGD over every parameter, with the settings' rate, momentum and weight decay."""
    return torch.optim.SGD(
        model.net.parameters(),
        lr=settings.lr,
        momentum=settings.momentum,
        weight_decay=settings.weight_decay,
    )


def _epoch(model, optimizer, scaler, images, labels, epoch, settings, precision, progress) -> dict:
    """Train one epoch (:func:`train_epoch`) and log its loss, accuracy and speed; returns its
    history row."""
    t0 = time.perf_counter()
    row = train_epoch(
        model,
        optimizer,
        images,
        labels,
        epoch,
        settings,
        precision=precision,
        scaler=scaler,
        progress=progress,
        desc=f"epoch {epoch}/{settings.epochs}",
    )
    seconds = time.perf_counter() - t0
    log.info(
        "epoch %d: loss %.4f, accuracy %.4f, %.1f s (%.1f img/s)",
        epoch,
        row["loss"],
        row["accuracy"],
        seconds,
        row["n_images"] / max(seconds, 1e-9),
    )
    return row


def _prepare_model(
    base, derived, images, labels, settings, device, precision, label_space, checkpoint_dir
):
    """The base model built (seeded) and checked against the training data, with every parameter
    trainable, and the precision training runs in: ``(model, precision)``."""
    with seeded(derive_seed(settings.seed, "retrain", "build"), device):
        model = load_model(base, device)
    precision = runtime.resolve_precision(precision, base.precision, device, training=True)
    if label_space is not None:
        check_compatible(model.label_space, get_label_space(label_space), base.name)
    if labels.max() >= model.num_classes:
        raise RetrainError(
            f"training labels go up to {int(labels.max())} but model {base.name!r} has "
            f"{model.num_classes} classes ({model.label_space.name})"
        )
    if derived is not None:
        check_rebuild(model, derived, images[:2], checkpoint_dir)
    for p in model.net.parameters():
        p.requires_grad_(True)
    return model, precision


def _resume(checkpoint_dir, key, settings, device, model, optimizer, scaler):
    """Restore the newest valid checkpoint of this training (``key``) into the model, optimiser
    and scaler, clearing older and foreign ones: ``(epochs done, history so far)``, ``(0, [])``
    when there is none."""
    found = resume.load_latest(checkpoint_dir, key, settings.epochs, map_location=device)
    if found is None:
        resume.clear(checkpoint_dir, keep_after=0)
        log.info("no checkpoint to resume from: training from the base weights")
        return 0, []
    start, state = found
    model.net.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    if scaler is not None and state.get("scaler"):
        scaler.load_state_dict(state["scaler"])
    resume.clear(checkpoint_dir, keep_after=None)
    log.info(
        "resuming after epoch %d from %s", start, resume.checkpoint_file(checkpoint_dir, start)
    )
    return start, list(state["history"])[:start]


def _checkpoint(checkpoint_dir, epoch, key, model, optimizer, scaler, history) -> None:
    """Save the state after ``epoch`` (model, optimiser, scaler, history) to resume from."""
    state = {
        "model": model.net.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scaler": scaler.state_dict() if scaler is not None else None,
        "history": history,
    }
    resume.save(checkpoint_dir, epoch, key, state)
