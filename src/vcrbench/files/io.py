"""File I/O shared by every stage: atomic writes, Parquet conventions, image bytes.

Every output of the workflow is written to a temporary name beside its destination and renamed
into place only once it is complete, so a killed job never leaves a half-written file that a later
run would mistake for a finished one.

A temporary name carries the host and process that write it (``.<name>.<host>.<pid>.<random>.tmp``):
a writer first removes the temporaries of its destination that a killed process left
(:func:`remove_stale_temporaries`), and :func:`sweep_temporaries` removes every such leftover under
a folder whose process is gone from this host.

Parquet files are written deterministically (fixed compression, no timestamps in metadata, pandas
index dropped) so that the same inputs give byte-identical files. They carry page checksums (CRC32
of every data page), and every read here verifies them: a damaged file (a flipped bit, a truncation)
raises :class:`DamagedFileError` naming it instead of giving wrong values.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import secrets
import socket
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from vcrbench.errors import DamagedFileError, DiskFullError
from vcrbench.files import provenance

PARQUET_COMPRESSION = "zstd"
PARQUET_COMPRESSION_LEVEL = 3
#: Metadata key under which a stage stores what it was asked (model, settings, inputs) in Parquet.
META_KEY = b"vcrbench"


#: The tail of a temporary name of :func:`temporary_sibling`, after ``.<name>.<host>``.
_TMP_TAIL = re.compile(r"\.(?P<pid>\d+)\.[a-z0-9_]+\.tmp(\.\w+)*$")


def _host() -> str:
    return socket.gethostname().replace("/", "_") or "localhost"


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True


def _writer(name: str, host: str) -> tuple[bool, int] | None:
    """``(written on this host, pid)`` of a temporary's name, None if it is not one."""
    match = _TMP_TAIL.search(name)
    if match is None:
        return None
    pid = int(match["pid"])
    return name[: match.start()].endswith(f".{host}"), pid


def remove_stale_temporaries(path: str | os.PathLike) -> list[Path]:
    """Remove the temporaries of destination ``path`` that a killed writer left (another host's,
    since a run has one writer per output, or this host's whose process is gone); returns them."""
    path = Path(path)
    host, removed = _host(), []
    if not path.parent.is_dir():
        return removed
    for entry in path.parent.iterdir():
        if not entry.name.startswith(f".{path.name}."):
            continue
        writer = _writer(entry.name, host)
        if writer is not None and not (writer[0] and process_alive(writer[1])):
            with contextlib.suppress(FileNotFoundError):
                entry.unlink()
                removed.append(entry)
    return removed


def sweep_temporaries(root: str | os.PathLike) -> list[Path]:
    """Remove every temporary under ``root`` whose writer was a process of this host that is gone
    (what a kill left); another host's are left to :func:`remove_stale_temporaries`."""
    host, removed = _host(), []
    for folder, _, files in os.walk(root):
        for name in files:
            writer = _writer(name, host) if name.startswith(".") else None
            if writer is not None and writer[0] and not process_alive(writer[1]):
                with contextlib.suppress(FileNotFoundError):
                    (Path(folder) / name).unlink()
                    removed.append(Path(folder) / name)
    return removed


def temporary_sibling(path: str | os.PathLike, suffix: str = "") -> Path:
    """A new empty temporary file beside ``path`` named after this host and process, once the
    stale temporaries of ``path`` are removed (``suffix`` after ``.tmp``, e.g. ``.npy``). It has
    the mode the umask gives a new file (0644 under umask 022), which the output keeps."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    prefix = f".{path.name}.{_host()}.{os.getpid()}."
    while True:
        tmp = path.parent / f"{prefix}{secrets.token_hex(6)}.tmp{suffix}"
        try:
            # mode 0o666 less the umask, as any new file: the rename keeps it (mkstemp's 0600
            # would leave every output readable by its owner only)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        return tmp


def _no_space(exc: BaseException) -> bool:
    """Whether ``exc`` says the device (or quota) is full (pyarrow's say so in their text only)."""
    if getattr(exc, "errno", None) in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(exc).lower()
    return "no space left on device" in text or "disk quota exceeded" in text


@contextlib.contextmanager
def disk_full_named(path: str | os.PathLike) -> Iterator[None]:
    """A full device met in the block raised as :class:`DiskFullError` naming output ``path``."""
    try:
        yield
    except Exception as exc:
        if _no_space(exc) and not isinstance(exc, DiskFullError):
            raise DiskFullError(path, f"{type(exc).__name__}: {exc}") from exc
        raise


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` only if the block succeeds.

    The temporary file is removed when the block raises (or the process is interrupted with an
    exception), so a failure never leaves a partial file at the destination; one that a killed
    process left is removed by the next writer of ``path`` (:func:`temporary_sibling`). A full
    device raises :class:`DiskFullError` naming ``path``.
    """
    path = Path(path)
    with disk_full_named(path):
        tmp_path = temporary_sibling(path)
        try:
            yield tmp_path
            os.replace(tmp_path, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                tmp_path.unlink()
            raise


def reserve(path: str | os.PathLike) -> None:
    """Allocate a sparse file's blocks (a memory map's): a full device is an OSError now (which
    :func:`disk_full_named` names), not a SIGBUS when a page is written."""
    with open(path, "r+b") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size and hasattr(os, "posix_fallocate"):
            os.posix_fallocate(fh.fileno(), 0, size)


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
    the provenance record (:mod:`vcrbench.files.provenance`) under ``vcrbench.provenance``.
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
            write_page_checksum=True,
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


def parquet_file(path: str | os.PathLike) -> pq.ParquetFile:
    """A Parquet file opened for reading with its page checksums verified; a file that exists but
    cannot be opened raises :class:`DamagedFileError` (missing: ``FileNotFoundError``)."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"Parquet file {path} does not exist")
    try:
        return pq.ParquetFile(path, page_checksum_verification=True)
    except (OSError, pa.ArrowException) as exc:
        raise DamagedFileError(path, f"not a readable Parquet file: {exc}") from exc


def read_table(
    path: str | os.PathLike, columns: Sequence[str] | None = None, row_group: int | None = None
) -> pa.Table:
    """``columns`` (all: None) of a Parquet file, or of one ``row_group``, checksums verified
    (:class:`DamagedFileError` naming the file when a page does not match)."""
    pf = parquet_file(path)
    cols = list(columns) if columns is not None else None
    try:
        if row_group is not None:
            return pf.read_row_group(row_group, columns=cols)
        return pf.read(columns=cols)
    except (OSError, pa.ArrowException) as exc:
        raise DamagedFileError(path, str(exc)) from exc


def read_parquet(path: str | os.PathLike, columns: list[str] | None = None) -> pd.DataFrame:
    """Read a Parquet file into pandas (page checksums verified), naming the file in the error if
    it cannot be read."""
    return read_table(path, columns).to_pandas()


def verify_parquet(path: str | os.PathLike) -> None:
    """Read every page of a Parquet file, checking its checksums (:class:`DamagedFileError`)."""
    pf = parquet_file(path)
    for group in range(pf.num_row_groups):
        try:
            pf.read_row_group(group)
        except (OSError, pa.ArrowException) as exc:
            raise DamagedFileError(path, f"row group {group}: {exc}") from exc


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
    names = set(parquet_file(path).schema_arrow.names)
    return read_parquet(path, columns=[c for c in columns if c in names])


def fixed_size_matrix(path: str | os.PathLike, column: str) -> np.ndarray:
    """A fixed-size list column of a Parquet file as one (rows, size) numpy array (e.g. the
    ``logprobs`` of a prediction file, float16), without going through pandas objects."""
    table = read_table(path, [column])
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


# --------------------------------------------------------------------------- image shards
#
# A shard stores its images as one ``fixed_size_binary(H*W*3)`` column: the raw uint8 pixels, row
# after row, so a row group decodes to one contiguous (N, H, W, 3) buffer with no per-image Python
# work. Only that column gets the shard codec below (LZ4: the measurements behind the choice are in
# docs/scale.md); dictionary encoding and min/max statistics, useless on pixels, are off for it. The
# other columns keep the Parquet conventions of :func:`write_parquet`. Row groups hold
# SHARD_ROW_GROUP rows, so a reader's batch (at most one row group) can be as large as a GPU wants.
# Readers accept the older layout too (a variable-size ``binary`` column, zstd).

#: Parquet codec of a shard's ``image`` column (lossless, as every codec Parquet offers).
SHARD_IMAGE_CODEC = "lz4"
#: Rows per row group of a shard: the largest batch a reader forms from one shard.
SHARD_ROW_GROUP = 256


def image_column(images: np.ndarray) -> pa.FixedSizeBinaryArray:
    """An (N, H, W, 3) uint8 batch as one ``fixed_size_binary(H*W*3)`` Arrow column, no copy
    per image (the batch's bytes become the column's data buffer)."""
    if images.dtype != np.uint8 or images.ndim != 4 or images.shape[3] != 3:
        raise ValueError(f"expected an NxHxWx3 uint8 batch, got {images.dtype} {images.shape}")
    n, h, w, _ = images.shape
    data = pa.py_buffer(np.ascontiguousarray(images))
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(h * w * 3), n, [None, data])


def _pixels(col: pa.Array, h: int, w: int, where: str) -> np.ndarray:
    """A zero-copy (N, H, W, 3) view of one chunk of an ``image`` column."""
    n, size = len(col), h * w * 3
    if col.null_count:
        raise ValueError(f"{where}: missing image bytes")
    buffers = col.buffers()
    if pa.types.is_fixed_size_binary(col.type):
        if col.type.byte_width != size:
            raise ValueError(
                f"{where}: image bytes do not match height x width x 3 "
                f"({col.type.byte_width} != {h}x{w}x3)"
            )
        start = col.offset * size
    elif pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type):
        dtype = np.int64 if pa.types.is_large_binary(col.type) else np.int32
        offsets = np.frombuffer(buffers[1], dtype=dtype)[col.offset : col.offset + n + 1]
        if not (np.diff(offsets) == size).all():
            raise ValueError(f"{where}: image bytes do not match height x width x 3")
        start = int(offsets[0])
    else:
        raise ValueError(f"{where}: column 'image' is {col.type}, not binary")
    data = np.frombuffer(buffers[-1], dtype=np.uint8)[start : start + n * size]
    return data.reshape(n, h, w, 3)


def images_from_table(
    table: pa.Table, where: str = "table", out: np.ndarray | None = None
) -> np.ndarray:
    """(N, H, W, 3) uint8 from a table's ``image``, ``height`` and ``width`` columns.

    Reads each chunk's data buffer as a whole (``fixed_size_binary`` of this layout, or the older
    ``binary``/``large_binary`` one), checks that every row holds H*W*3 bytes, and copies it once
    into ``out`` (an (N, H, W, 3) uint8 array, e.g. a shared-memory tensor's) or a new array.
    """
    n = table.num_rows
    if n == 0:
        return np.zeros((0, 0, 0, 3), dtype=np.uint8) if out is None else out
    heights = table.column("height").to_numpy()
    widths = table.column("width").to_numpy()
    if (heights != heights[0]).any() or (widths != widths[0]).any():
        raise ValueError(f"{where}: images of different sizes in one row group")
    h, w = int(heights[0]), int(widths[0])
    if out is None:
        out = np.empty((n, h, w, 3), dtype=np.uint8)
    elif out.shape != (n, h, w, 3) or out.dtype != np.uint8:
        raise ValueError(
            f"{where}: output buffer {out.dtype} {out.shape}, need uint8 {(n, h, w, 3)}"
        )
    at = 0
    for chunk in table.column("image").chunks:
        if len(chunk):
            out[at : at + len(chunk)] = _pixels(chunk, h, w, where)
            at += len(chunk)
    return out


def write_image_batches(
    out_path: str | os.PathLike,
    schema: pa.Schema,
    batches: Iterable[Mapping],
    metadata: Mapping | None = None,
    row_group_size: int = SHARD_ROW_GROUP,
    codec: str = SHARD_IMAGE_CODEC,
    codec_level: int | None = None,
) -> Path:
    """Stream column batches to a shard at ``out_path`` atomically (see the section comment).

    ``schema`` names every column; its ``image`` field's type is taken from the first batch (a
    ``fixed_size_binary`` column of :func:`image_column`). Rows are regrouped into row groups of
    ``row_group_size``, whatever the batches' sizes, so equal rows give equal bytes. ``codec`` and
    ``codec_level`` (the image column's Parquet codec) are for benchmarks; shards use the default.
    """
    schema = schema.with_metadata(schema_metadata(schema, metadata))
    others = [name for name in schema.names if name != "image"]
    writer = None
    pending: list[pa.Table] = []
    held = 0

    def flush(tables: list[pa.Table], rows: int) -> list[pa.Table]:
        """Write the first ``rows`` rows of ``tables``; return the remainder."""
        joined = pa.concat_tables(tables).combine_chunks()
        writer.write_table(joined.slice(0, rows), row_group_size=row_group_size)
        rest = joined.slice(rows)
        return [rest] if rest.num_rows else []

    with atomic_path(out_path) as tmp:
        try:
            for columns in batches:
                if writer is None:
                    image = columns["image"]
                    index = schema.get_field_index("image")
                    if isinstance(image, pa.Array):
                        schema = schema.set(index, pa.field("image", image.type))
                    writer = pq.ParquetWriter(
                        tmp,
                        schema,
                        compression={
                            **{c: PARQUET_COMPRESSION for c in others},
                            "image": codec,
                        },
                        compression_level={
                            **{c: PARQUET_COMPRESSION_LEVEL for c in others},
                            **({"image": codec_level} if codec_level is not None else {}),
                        },
                        use_dictionary=others,
                        write_statistics=others,
                        write_page_checksum=True,
                    )
                table = pa.Table.from_pydict(dict(columns), schema=schema)
                pending.append(table)
                held += table.num_rows
                if held >= row_group_size:
                    full = held - held % row_group_size
                    pending = flush(pending, full)
                    held -= full
            if writer is None:  # no rows: an empty file with the schema
                pq.write_table(
                    schema.empty_table(),
                    tmp,
                    compression=PARQUET_COMPRESSION,
                    write_page_checksum=True,
                )
            elif held:
                flush(pending, held)
        finally:
            if writer is not None:
                writer.close()
    return Path(out_path)


def encode_image(image: np.ndarray) -> bytes:
    """Raw bytes of an HxWx3 uint8 image (lossless; shape stored in separate columns)."""
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"expected an HxWx3 uint8 image, got {image.dtype} {image.shape}")
    return np.ascontiguousarray(image).tobytes()


def file_sha256(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """``sha256:<hex>`` of a file's bytes (read in chunks: memory stays bounded)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return "sha256:" + digest.hexdigest()
