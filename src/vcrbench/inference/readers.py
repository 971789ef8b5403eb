"""Readers of an inference job: batches of uint8 images from test-set shards or the clean set.

Each is a torch ``IterableDataset`` whose items are ``(offset, uint8 images)``: ``offset`` is the
position of the batch's first row in the job's output, so batches may arrive in any order from any
number of DataLoader workers (each worker reads its own Parquet row groups or clean-set slices).
Batches never span two row groups, so each image's batch, and thus its prediction, does not
depend on the number of workers.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from torch.utils.data import IterableDataset, get_worker_info

from vcrbench.defenses import Defense
from vcrbench.errors import InferenceError
from vcrbench.vocab import SHARD_COLUMNS


def worker_init(_: int) -> None:
    torch.set_num_threads(1)  # workers decode bytes; torch threads would only oversubscribe


def my_share(items: list) -> list:
    info = get_worker_info()
    return items if info is None else items[info.id :: info.num_workers]


@dataclass(frozen=True)
class Unit:
    path: str
    row_group: int
    offset: int  # position of the row group's first row in the job's output


class ShardBatches(IterableDataset):
    """Yields ``(offset, uint8 images)`` batches; each worker reads its own row groups."""

    def __init__(self, units: list[Unit], batch_size: int) -> None:
        self.units = units
        self.batch_size = batch_size

    def __iter__(self):
        for unit in my_share(self.units):
            table = pq.ParquetFile(unit.path).read_row_group(
                unit.row_group, columns=["image", "height", "width"]
            )
            for start in range(0, table.num_rows, self.batch_size):
                part = table.slice(start, self.batch_size)
                images = images_from_arrow(part, unit.path)
                yield unit.offset + start, torch.from_numpy(images)


def images_from_arrow(table: pa.Table, where: str) -> np.ndarray:
    """(N, H, W, 3) uint8 from the ``image`` column, without a Python object per image."""
    heights = table.column("height").to_numpy()
    widths = table.column("width").to_numpy()
    n = table.num_rows
    if (heights != heights[0]).any() or (widths != widths[0]).any():
        raise InferenceError(f"{where}: images of different sizes in one row group")
    h, w = int(heights[0]), int(widths[0])
    col = table.column("image").combine_chunks()
    if col.null_count:
        raise InferenceError(f"{where}: missing image bytes")
    if pa.types.is_large_binary(col.type):
        offsets_dtype = np.int64
    elif pa.types.is_binary(col.type):
        offsets_dtype = np.int32
    else:
        raise InferenceError(f"{where}: column 'image' is {col.type}, not binary")
    buffers = col.buffers()
    offsets = np.frombuffer(buffers[1], dtype=offsets_dtype)[col.offset : col.offset + n + 1]
    size = h * w * 3
    if not (np.diff(offsets) == size).all():
        raise InferenceError(f"{where}: image bytes do not match height x width x 3")
    data = np.frombuffer(buffers[2], dtype=np.uint8)[offsets[0] : offsets[0] + n * size]
    return data.reshape(n, h, w, 3).copy()  # a writable array that owns its memory


class CleanBatches(IterableDataset):
    """Yields ``(offset, uint8 images)`` batches of clean-set rows; workers take turns."""

    def __init__(self, images_path: Path, rows: np.ndarray, batch_size: int) -> None:
        self.images_path = images_path
        self.rows = rows
        self.starts = list(range(0, len(rows), batch_size))
        self.batch_size = batch_size

    def __iter__(self):
        array = np.load(self.images_path, mmap_mode="r")
        for start in my_share(self.starts):
            rows = self.rows[start : start + self.batch_size]
            if rows.size and (np.diff(rows) == 1).all():
                images = np.array(array[rows[0] : rows[-1] + 1])
            else:
                images = np.array(array[rows])
            yield start, torch.from_numpy(images)


class DefendedBatches(IterableDataset):
    """The batches of another reader, each image passed through a defense (docs/defenses.md).

    The defense runs where the images are read (in the DataLoader's workers when there are any),
    on the uint8 images, before the model's own preprocessing."""

    def __init__(self, batches: IterableDataset, defense: Defense) -> None:
        self.batches = batches
        self.defense = defense

    def __iter__(self):
        for offset, images in self.batches:
            yield offset, torch.from_numpy(self.defense.apply_batch(images.numpy()))


def shard_batches(
    shard_paths: Sequence[str | os.PathLike], batch_size: int
) -> Iterator[tuple[int, torch.Tensor]]:
    """The ``(offset, uint8 images)`` batches a job forms from these shards, in order."""
    _, units = read_shard_metadata(shard_paths)
    yield from ShardBatches(units, batch_size)


def read_shard_metadata(shard_paths: Sequence[str | os.PathLike]) -> tuple[pd.DataFrame, list]:
    frames, units, offset, has_severity = [], [], 0, None
    for path in shard_paths:
        path = Path(path)
        if not path.is_file():
            raise InferenceError(f"shard {path} does not exist")
        try:
            pf = pq.ParquetFile(path)
        except (OSError, pa.ArrowException) as exc:
            raise InferenceError(f"cannot read shard {path}: {exc}") from exc
        names = pf.schema_arrow.names
        missing = [c for c in SHARD_COLUMNS if c not in names]
        if missing:
            raise InferenceError(f"shard {path} lacks column(s) {missing}")
        severity = "severity" in names
        if has_severity is None:
            has_severity = severity
        elif severity != has_severity:
            raise InferenceError(
                f"shard {path} {'has' if severity else 'lacks'} a 'severity' column, unlike the "
                "shards before it; do not mix ImageNet-C sets with other shards in one job"
            )
        columns = ["sample_id", "image_id", "label", "dv"] + (["severity"] if severity else [])
        frames.append(pf.read(columns=columns).to_pandas())
        for rg in range(pf.metadata.num_row_groups):
            units.append(Unit(str(path), rg, offset))
            offset += pf.metadata.row_group(rg).num_rows
    if not frames:
        raise InferenceError("no shards given")
    meta = pd.concat(frames, ignore_index=True)
    return meta, units
