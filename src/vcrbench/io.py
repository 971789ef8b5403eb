"""File I/O shared by every stage: atomic writes, Parquet conventions, image bytes.

Every output of the workflow is written to a temporary name beside its destination and renamed
into place only once it is complete, so a killed job never leaves a half-written file that a later
run would mistake for a finished one.

Parquet files are written deterministically (fixed compression, no timestamps in metadata, pandas
index dropped) so that the same inputs give byte-identical files.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from vcrbench import provenance

PARQUET_COMPRESSION = "zstd"
PARQUET_COMPRESSION_LEVEL = 3
#: Metadata key under which a stage stores what it was asked (model, settings, inputs) in Parquet.
META_KEY = b"vcrbench"


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` only if the block succeeds.

    The temporary file is removed when the block raises (or the process is interrupted with an
    exception), so a failure never leaves a partial file at the destination.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise


def to_table(data: pd.DataFrame | pa.Table) -> pa.Table:
    if isinstance(data, pa.Table):
        return data
    return pa.Table.from_pandas(data, preserve_index=False)


def write_parquet(
    data: pd.DataFrame | pa.Table,
    path: str | os.PathLike,
    metadata: Mapping | None = None,
    row_group_size: int | None = None,
) -> Path:
    """Write ``data`` to ``path`` atomically and deterministically.

    ``metadata`` (JSON-serialisable) is stored in the file's schema metadata under ``vcrbench``,
    the provenance record (:mod:`vcrbench.provenance`) under ``vcrbench.provenance``.
    """
    table = to_table(data)
    table = table.replace_schema_metadata(schema_metadata(table.schema, metadata))
    with atomic_path(path) as tmp:
        pq.write_table(
            table,
            tmp,
            compression=PARQUET_COMPRESSION,
            compression_level=PARQUET_COMPRESSION_LEVEL,
            row_group_size=row_group_size,
            write_statistics=True,
        )
    return Path(path)


def schema_metadata(schema: pa.Schema, metadata: Mapping | None = None) -> dict[bytes, bytes]:
    """The key-value metadata of a Parquet file of ``schema``: its own (less pandas'), the
    stage's ``metadata`` under :data:`META_KEY`, and the provenance record."""
    meta = dict(schema.metadata or {})
    # pandas metadata holds the pandas version; drop it so output bytes do not depend on it.
    meta.pop(b"pandas", None)
    if metadata is not None:
        meta[META_KEY] = json.dumps(metadata, sort_keys=True, default=str).encode()
    meta[provenance.PARQUET_KEY] = provenance.encode()
    return meta


def read_parquet(path: str | os.PathLike, columns: list[str] | None = None) -> pd.DataFrame:
    """Read a Parquet file into pandas, naming the file in the error if it cannot be read."""
    try:
        return pq.read_table(path, columns=columns).to_pandas()
    except (OSError, pa.ArrowException) as exc:
        raise OSError(f"cannot read Parquet file {path}: {exc}") from exc


def read_metadata(path: str | os.PathLike) -> dict:
    """The VCR-Bench provenance metadata stored in a Parquet file (empty if none)."""
    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(META_KEY)
    return json.loads(raw) if raw else {}


def read_provenance(path: str | os.PathLike) -> dict:
    """The provenance record stored in a Parquet file (empty if none)."""
    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(provenance.PARQUET_KEY)
    return json.loads(raw) if raw else {}


def read_columns(path: str | os.PathLike, columns: Sequence[str]) -> pd.DataFrame:
    """Those of ``columns`` that a Parquet file has (in that order), without reading the rest."""
    try:
        names = set(pq.read_schema(path).names)
    except (OSError, pa.ArrowException) as exc:
        raise OSError(f"cannot read Parquet file {path}: {exc}") from exc
    return read_parquet(path, columns=[c for c in columns if c in names])


def fixed_size_matrix(path: str | os.PathLike, column: str) -> np.ndarray:
    """A fixed-size list column of a Parquet file as one (rows, size) numpy array (e.g. the
    ``logprobs`` of a prediction file, float16), without going through pandas objects."""
    table = pq.read_table(path, columns=[column])
    field = table.schema.field(column)
    if not pa.types.is_fixed_size_list(field.type):
        raise ValueError(f"{path}: column {column!r} is {field.type}, not a fixed-size list")
    values = table.column(column).combine_chunks()
    size = field.type.list_size
    return values.flatten().to_numpy(zero_copy_only=False).reshape(len(values), size)


def write_csv(df: pd.DataFrame, path: str | os.PathLike, float_format: str = "%.6g") -> Path:
    """Write a table as CSV atomically, with a fixed float format (stable bytes across runs)."""
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False, float_format=float_format, lineterminator="\n")
    return Path(path)


def write_text(text: str, path: str | os.PathLike) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def write_json(obj, path: str | os.PathLike) -> Path:
    return write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n", path)


def encode_image(image: np.ndarray) -> bytes:
    """Raw bytes of an HxWx3 uint8 image (lossless; shape stored in separate columns)."""
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"expected an HxWx3 uint8 image, got {image.dtype} {image.shape}")
    return np.ascontiguousarray(image).tobytes()


def decode_image(data: bytes, height: int, width: int) -> np.ndarray:
    """Inverse of :func:`encode_image`."""
    arr = np.frombuffer(data, dtype=np.uint8)
    if arr.size != height * width * 3:
        raise ValueError(
            f"image bytes hold {arr.size} values, expected {height}x{width}x3 = {height * width * 3}"
        )
    return arr.reshape(height, width, 3)


def decode_images(df: pd.DataFrame) -> np.ndarray:
    """Stack the ``image`` column of a shard (rows of equal size) into an NxHxWx3 uint8 array."""
    if len(df) == 0:
        return np.zeros((0, 0, 0, 3), dtype=np.uint8)
    heights, widths = df["height"].to_numpy(), df["width"].to_numpy()
    if (heights != heights[0]).any() or (widths != widths[0]).any():
        raise ValueError("images of different sizes cannot be stacked")
    buf = b"".join(df["image"].tolist())
    return np.frombuffer(buf, dtype=np.uint8).reshape(len(df), int(heights[0]), int(widths[0]), 3)
