"""Per-epoch training checkpoints: atomic writes, and finding the one to resume from.

A checkpoint ``epoch-NNN.pt`` holds the network's and the optimiser's state after epoch NNN, the
training history so far and a fingerprint of everything the training depends on except the number
of epochs (base model, training images, hyperparameters, seed). It is written through
:func:`vcrbench.files.io.atomic_path`, so a job killed while writing leaves the previous checkpoint
and no partial file under a checkpoint's name. :func:`load_latest` returns the newest checkpoint
that reads, is complete and has the expected fingerprint; an unreadable file or one made with other
settings is skipped with a log line, never resumed from.

The folder is not an output of the workflow's rule (Snakemake deletes the outputs of a failed job,
and would delete these too): it survives a killed job, so that the rerun resumes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io as io_bytes
import json
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from vcrbench.files import io
from vcrbench.retrain.data import files_digest

if TYPE_CHECKING:
    from vcrbench.models import ModelSpec
    from vcrbench.retrain.loop import TrainSettings

log = logging.getLogger(__name__)

FORMAT = "vcrbench-retrain-checkpoint/1"
#: Bump when the training procedure changes, so that old checkpoints are not resumed from.
PROCEDURE = "sgd-ce/1"
_NAME = re.compile(r"^epoch-(\d+)\.pt$")
_STRAY = re.compile(r"^\.epoch-\d+\.pt\..*\.tmp$")


def checkpoint_file(folder: str | os.PathLike, epoch: int) -> Path:
    return Path(folder) / f"epoch-{int(epoch):03d}.pt"


def list_checkpoints(folder: str | os.PathLike) -> list[tuple[int, Path]]:
    """``(epoch, path)`` of the checkpoint files in ``folder``, oldest first."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := _NAME.match(p.name))]
    return sorted(found)


def save(folder: str | os.PathLike, epoch: int, fingerprint: str, state: dict) -> Path:
    """Write the checkpoint of ``epoch`` atomically (``state``: model, optimizer, history …)."""
    path = checkpoint_file(folder, epoch)
    payload = {"format": FORMAT, "epoch": int(epoch), "fingerprint": fingerprint, **state}
    write_torch(payload, path)
    return path


def write_torch(obj, path: str | os.PathLike) -> Path:
    """``torch.save`` to ``path`` atomically and byte-reproducibly.

    Saving to a file names the archive's root folder after the file, here a random temporary
    name; saving to a buffer names it ``archive``, so equal objects give equal bytes.
    """
    buffer = io_bytes.BytesIO()
    torch.save(obj, buffer)
    with io.atomic_path(path) as tmp:
        tmp.write_bytes(buffer.getbuffer())
    return Path(path)


def load_latest(
    folder: str | os.PathLike,
    fingerprint: str,
    max_epoch: int,
    map_location: str | torch.device = "cpu",
) -> tuple[int, dict] | None:
    """The newest valid checkpoint of at most ``max_epoch`` epochs, or None.

    Valid: it loads (``weights_only``), names this format and its own epoch, and carries
    ``fingerprint``. Others are skipped, newest first, each with a warning saying why.
    """
    for epoch, path in reversed(list_checkpoints(folder)):
        if epoch > max_epoch:
            continue
        try:
            state = torch.load(path, map_location=map_location, weights_only=True)
        except Exception as exc:  # a truncated or foreign file: say so and try an older one
            log.warning("checkpoint %s cannot be read (%s); trying an older one", path, exc)
            continue
        if not isinstance(state, dict) or state.get("format") != FORMAT:
            log.warning("checkpoint %s is not a %s file; trying an older one", path, FORMAT)
            continue
        if state.get("epoch") != epoch:
            log.warning(
                "checkpoint %s says epoch %s; trying an older one", path, state.get("epoch")
            )
            continue
        if state.get("fingerprint") != fingerprint:
            log.warning(
                "checkpoint %s was made with other training images or settings; not resuming "
                "from it",
                path,
            )
            continue
        return epoch, state
    return None


def clear(folder: str | os.PathLike, keep_after: int | None = 0) -> list[Path]:
    """Remove temporary files that a killed write left behind and the checkpoints of epochs
    after ``keep_after`` (0: all of them; None: none); returns what was removed."""
    folder = Path(folder)
    removed = []
    if not folder.is_dir():
        return removed
    for path in sorted(folder.iterdir()):
        m = _NAME.match(path.name)
        stale = m is not None and keep_after is not None and int(m.group(1)) > keep_after
        if stale or _STRAY.match(path.name):
            path.unlink(missing_ok=True)
            removed.append(path)
    if removed:
        log.info("removed %d stale checkpoint file(s) from %s", len(removed), folder)
    return removed


def prune(folder: str | os.PathLike, keep: int | None) -> list[Path]:
    """Keep the newest ``keep`` checkpoints (None: keep all); returns what was removed."""
    if keep is None:
        return []
    if keep < 1:
        raise ValueError(f"keep_checkpoints must be at least 1 (or None for all), not {keep}")
    old = list_checkpoints(folder)[:-keep]
    for _, path in old:
        path.unlink(missing_ok=True)
    return [p for _, p in old]


def fingerprint(base: ModelSpec, settings: TrainSettings, data_digest: str) -> str:
    """What a checkpoint must match to be resumed from: all inputs except the epoch count."""
    weights = None
    if base.checkpoint is not None and Path(base.checkpoint).is_file():
        weights = files_digest([base.checkpoint])
    parts = {
        "procedure": PROCEDURE,
        "base": base.to_config(),
        "base_weights": weights,
        "data": data_digest,
        **{k: v for k, v in dataclasses.asdict(settings).items() if k != "epochs"},
    }
    return hashlib.blake2b(
        json.dumps(parts, sort_keys=True, default=str).encode(), digest_size=16
    ).hexdigest()
