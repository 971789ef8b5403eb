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
import torch
from torch.utils.data import IterableDataset, get_worker_info

from vcrbench.defenses import Defense
from vcrbench.errors import InferenceError
from vcrbench.files import io
from vcrbench.vocab import IMAGE_COLUMNS, SHARD_COLUMNS


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


def batch_buffer(shape: tuple[int, ...]) -> torch.Tensor:
    """An empty uint8 tensor to decode a batch into: in shared memory inside a DataLoader worker.

    A worker's batch crosses to the main process through shared memory; a tensor allocated there
    from the start is sent as is, where an ordinary one would be copied into shared memory first
    (one copy of every image fewer per batch).
    """
    if get_worker_info() is None:
        return torch.empty(shape, dtype=torch.uint8)
    storage = torch.UntypedStorage._new_shared(int(np.prod(shape)))  # as default_collate does
    return torch.empty(0, dtype=torch.uint8).set_(storage).view(shape)


class ShardBatches(IterableDataset):
    """Yields ``(offset, uint8 images)`` batches; each worker reads its own row groups."""

    def __init__(self, units: list[Unit], batch_size: int) -> None:
        self.units = units
        self.batch_size = batch_size

    def __iter__(self):
        for unit in my_share(self.units):
            table = io.read_table(unit.path, IMAGE_COLUMNS, row_group=unit.row_group)
            for start in range(0, table.num_rows, self.batch_size):
                part = table.slice(start, self.batch_size)
                yield unit.offset + start, images_from_arrow(part, unit.path, batch=True)


def images_from_arrow(table: pa.Table, where: str, batch: bool = False):
    """(N, H, W, 3) uint8 from the ``image`` column, without a Python object per image.

    A numpy array, or with ``batch`` a torch tensor from :func:`batch_buffer`. Reads both the
    fixed-size layout of current shards and the variable-size binary one of older shards.
    """
    n = table.num_rows
    try:
        if not batch:
            return io.images_from_table(table, where)
        if n == 0:
            return torch.empty((0, 0, 0, 3), dtype=torch.uint8)
        h, w = (int(table.column(c)[0].as_py()) for c in ("height", "width"))
        out = batch_buffer((n, h, w, 3))
        io.images_from_table(table, where, out=out.numpy())
        return out
    except ValueError as exc:
        raise InferenceError(str(exc)) from exc


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
            out = batch_buffer((len(rows), *array.shape[1:]))
            if rows.size and (np.diff(rows) == 1).all():
                out.numpy()[...] = array[rows[0] : rows[-1] + 1]
            else:
                out.numpy()[...] = array[rows]
            yield start, out


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
        pf = io.parquet_file(path)
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
        frames.append(io.read_table(path, columns).to_pandas())
        for rg in range(pf.metadata.num_row_groups):
            units.append(Unit(str(path), rg, offset))
            offset += pf.metadata.row_group(rg).num_rows
    if not frames:
        raise InferenceError("no shards given")
    meta = pd.concat(frames, ignore_index=True)
    return meta, units
