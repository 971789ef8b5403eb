"""The training images: every image and label of a run's training shards, in order, and a digest
of the files that identifies the training set in checkpoints."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence

import numpy as np

from vcrbench.errors import RetrainError
from vcrbench.files import io


def load_training_set(paths: Sequence[str | os.PathLike]) -> tuple[np.ndarray, np.ndarray]:
    """All images (uint8 N x H x W x 3) and labels (int64) of the training shards, in order.

    The array is allocated once and filled row group by row group, so the peak memory is the
    images plus one row group.
    """
    if not paths:
        raise RetrainError("no training shards given")
    files = [io.parquet_file(p) for p in paths]
    total = sum(f.metadata.num_rows for f in files)
    if total == 0:
        raise RetrainError(f"the training shards hold no images: {', '.join(map(str, paths))}")
    images: np.ndarray | None = None
    labels = np.empty(total, dtype=np.int64)
    at = 0
    for path, f in zip(paths, files, strict=True):
        for g in range(f.num_row_groups):
            table = io.read_table(path, ["label", "height", "width", "image"], row_group=g)
            block = io.images_from_table(table, str(path))
            if images is None:
                images = np.empty((total, *block.shape[1:]), dtype=np.uint8)
            elif block.shape[1:] != images.shape[1:]:
                raise RetrainError(
                    f"training shard {path} holds images of shape {block.shape[1:]}, others "
                    f"{images.shape[1:]}"
                )
            block_labels = table.column("label").to_numpy()
            if (block_labels < 0).any():
                raise RetrainError(
                    f"training shard {path} holds unlabelled images (label -1): cross-entropy "
                    "needs a label for every image"
                )
            images[at : at + len(block)] = block
            labels[at : at + len(block)] = block_labels
            at += len(block)
    assert images is not None
    return images, labels


def files_digest(paths: Sequence[str | os.PathLike]) -> str:
    """BLAKE2b of the files' bytes, in order (identifies the training set in checkpoints)."""
    h = hashlib.blake2b(digest_size=16)
    for p in paths:
        with open(p, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 22), b""):  # noqa: B023
                h.update(chunk)
        h.update(b"\x1f")
    return h.hexdigest()
