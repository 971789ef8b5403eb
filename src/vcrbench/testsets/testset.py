"""Test sets: corrupt the samples of a manifest, measure Δv on the exact pixels, write shards.

A shard holds the rows of one manifest shard, each with its corrupted image (the raw uint8 pixels
in one fixed-size binary column, :func:`vcrbench.files.io.image_column`, LZ4-compressed) and the VIF
and Δv of that very uint8 array against the clean image. Shards are generated ``batch_size`` samples
at a time, streamed to a temporary file in row groups of ``io.SHARD_ROW_GROUP`` rows and renamed
into place only when complete, so memory is bounded by a row group (not the shard or the test set)
and a failure leaves no file. The ImageNet-C comparison sets are written the same way, and
:func:`coverage`, :func:`coverage_table` and :func:`dv_histograms` summarise Δv as the paper's
Table 2 and Fig. 4/11 do.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
from tqdm.auto import tqdm

from vcrbench.bins import bin_index
from vcrbench.corruptions import Corruption
from vcrbench.files import io
from vcrbench.seeding import derive_seed
from vcrbench.settings import VifSettings
from vcrbench.testsets import measure
from vcrbench.vocab import N_BINS, PARAM_PREFIX, param_column

log = logging.getLogger(__name__)

#: The schema's ``vif`` defaults, for direct library use (a workflow job passes its own).
_DEFAULT = VifSettings()


def _check_manifest_params(manifest: pd.DataFrame, corruption: Corruption) -> list[str]:
    cols = corruption.param_columns
    have = sorted(c for c in manifest.columns if c.startswith(PARAM_PREFIX))
    if sorted(cols) != have:
        raise ValueError(
            f"manifest parameter columns {have} do not match corruption {corruption.name!r} "
            f"(expected {sorted(cols)})"
        )
    return cols


def _schema(corruption: Corruption, extra: Sequence[tuple[str, pa.DataType]] = ()) -> pa.Schema:
    fields = [
        ("sample_id", pa.int64()),
        ("image_id", pa.string()),
        ("label", pa.int64()),
        ("corruption", pa.string()),
        *[(c, pa.float64()) for c in corruption.param_columns],
        *extra,
        ("seed", pa.int64()),
        ("vif", pa.float64()),
        ("dv", pa.float64()),
        ("bin", pa.int64()),
        ("height", pa.int64()),
        ("width", pa.int64()),
        ("image", pa.binary()),
    ]
    return pa.schema(fields)


def _sample_rows(
    corruption: Corruption,
    clean_set,
    rows: pd.DataFrame,
    param_cols: Sequence[str],
    vif_settings: VifSettings,
    device,
    batch_size: int,
    within: str,
    extra: Sequence[str] = (),
    desc: str = "",
) -> Iterable[dict]:
    """Corrupt and measure ``rows`` batch by batch; yields column dicts."""
    n = len(rows)
    bar = tqdm(total=n, desc=desc, unit="img", mininterval=2.0, disable=None)
    try:
        for start in range(0, n, batch_size):
            chunk = rows.iloc[start : start + batch_size]
            params = {c[len(PARAM_PREFIX) :]: chunk[c].to_numpy() for c in param_cols}
            corrupted, vif, dv = measure.corrupt_and_measure(
                corruption, clean_set, chunk["image_id"].tolist(), params,
                chunk["seed"].to_numpy(), within, vif_settings, device,
            )  # fmt: skip
            height, width = corrupted.shape[1:3]
            columns = {
                "sample_id": chunk["sample_id"].to_numpy(np.int64),
                "image_id": chunk["image_id"].astype(str).tolist(),
                "label": chunk["label"].to_numpy(np.int64),
                "corruption": [corruption.name] * len(chunk),
                **{c: chunk[c].to_numpy(np.float64) for c in param_cols},
                **{c: chunk[c].to_numpy() for c in extra},
                "seed": chunk["seed"].to_numpy(np.int64),
                "vif": vif,
                "dv": dv,
                "bin": bin_index(dv, N_BINS),
                "height": np.full(len(chunk), height, dtype=np.int64),
                "width": np.full(len(chunk), width, dtype=np.int64),
                "image": io.image_column(corrupted),
            }
            bar.update(len(chunk))
            yield columns
    finally:
        bar.close()


def generate_shard(
    manifest: pd.DataFrame,
    shard: int,
    clean_set,
    corruption: Corruption,
    out_path: str | os.PathLike,
    vif_settings: VifSettings = _DEFAULT,
    device=None,
    batch_size: int = 64,
) -> Path:
    """Write shard ``shard`` of ``manifest``: corrupted images with VIF, Δv and bin, measured as
    ``vif_settings`` (the config's ``vif`` block) says.

    Columns: ``sample_id, image_id, label, corruption, param.<name>…, seed, vif, dv, bin, height,
    width, image``; each row carries its own seed (from the manifest). Parameters are checked
    against the corruption's domain (an out-of-domain value raises naming the corruption and
    parameter). Written atomically.
    """
    _check_manifest_params(manifest, corruption)
    rows = manifest[manifest["shard"] == int(shard)].sort_values("sample_id", kind="stable")
    if rows.empty:
        shards = sorted(manifest["shard"].unique().tolist())
        raise ValueError(
            f"shard {shard} of corruption {corruption.name!r} is empty or does not exist "
            f"(manifest shards: {shards[0] if shards else '-'}..{shards[-1] if shards else '-'})"
        )
    meta = {"shard": int(shard), "n": len(rows)}
    return _write_set(
        corruption,
        clean_set,
        rows,
        out_path,
        vif_settings,
        device,
        batch_size,
        "domain",
        extra=(),
        desc=f"{corruption.name} shard {shard}",
        meta=meta,
    )


def imagenet_c_rows(
    corruption: Corruption,
    clean_set,
    seed: int,
    n_images: int | None = None,
    start: int = 0,
    stop: int | None = None,
) -> pd.DataFrame:
    """The ImageNet-C comparison samples: every image at each of the five severities.

    The first ``n_images`` clean images (all if None), severity by severity: sample ``s`` is image
    ``s mod n`` at severity ``s div n + 1`` (``n`` images per severity), with its own seed
    ``derive_seed(seed, "imagenet-c", corruption, severity, image_id)``. ``start``/``stop`` select
    the samples ``start <= sample_id < stop`` (a shard) without computing the others; every
    sample is the same whichever range it is computed in.
    """
    if not corruption.imagenet_c:
        raise ValueError(f"corruption {corruption.name!r} has no ImageNet-C severities")
    ids = list(clean_set.image_ids)
    labels = np.asarray(clean_set.labels, dtype=np.int64)
    if n_images is not None:
        if n_images < 1:
            raise ValueError(f"n_images must be at least 1, not {n_images}")
        ids, labels = ids[:n_images], labels[:n_images]
    n = len(ids)
    total = n * len(corruption.imagenet_c)
    stop = total if stop is None else min(int(stop), total)
    sample_ids = np.arange(min(int(start), stop), stop, dtype=np.int64)
    image = sample_ids % n if n else sample_ids
    severity = sample_ids // n + 1 if n else sample_ids
    frame = pd.DataFrame(
        {
            "sample_id": sample_ids,
            "image_id": [ids[i] for i in image],
            "label": labels[image],
            "severity": severity.astype(np.int64),
            "seed": np.array(
                [
                    derive_seed(seed, "imagenet-c", corruption.name, int(sev), ids[i])
                    for sev, i in zip(severity, image, strict=True)
                ],
                dtype=np.int64,
            ),
        }
    )
    for name in corruption.param_names:
        levels = np.array([float(p[name]) for p in corruption.imagenet_c], dtype=np.float64)
        frame[param_column(name)] = levels[severity - 1] if len(frame) else levels[:0]
    return frame


def generate_imagenet_c_shard(
    corruption: Corruption,
    clean_set,
    shard: int,
    shard_size: int,
    n_shards: int,
    out_path: str | os.PathLike,
    vif_settings: VifSettings = _DEFAULT,
    *,
    seed: int,
    n_images: int | None = None,
    device=None,
    batch_size: int = 64,
) -> Path:
    """Shard ``shard`` of the ImageNet-C set: its samples ``shard·shard_size`` up to the next shard.

    The set is :func:`imagenet_c_rows` (the same samples, pixels and seeds whatever the shard
    size); ``n_shards`` is what the workflow planned for it from the config. A set with fewer
    samples than planned (images skipped as unreadable) leaves the last shards short or empty (an
    empty shard is a valid file with no rows); a set with more samples than the planned shards
    hold raises, naming the counts, since those samples would be lost.
    """
    if shard_size < 1:
        raise ValueError(f"shard_size must be at least 1, not {shard_size}")
    if not 0 <= int(shard) < int(n_shards):
        raise ValueError(f"ImageNet-C shard {shard} is not one of the {n_shards} planned shards")
    n = len(clean_set.image_ids) if n_images is None else min(n_images, len(clean_set.image_ids))
    total = n * len(corruption.imagenet_c)
    if total > int(n_shards) * int(shard_size):
        raise ValueError(
            f"the ImageNet-C set of {corruption.name!r} has {total} samples ({n} images x "
            f"{len(corruption.imagenet_c)} severities) but {n_shards} shards of {shard_size} "
            "were planned from the config: the clean set holds more images than the dataset's "
            "listing gave at planning time (set dataset.limit or imagenet_c.n_images)"
        )
    start = int(shard) * int(shard_size)
    rows = imagenet_c_rows(corruption, clean_set, seed, n_images, start, start + int(shard_size))
    meta = {"n_images": n, "shard": int(shard), "n": len(rows)}
    label = f"shard {shard}"
    return _write_imagenet_c(
        corruption, clean_set, rows, out_path, vif_settings, device, batch_size, label, meta
    )


def generate_imagenet_c(
    corruption: Corruption,
    clean_set,
    out_path: str | os.PathLike,
    vif_settings: VifSettings = _DEFAULT,
    *,
    seed: int,
    n_images: int | None = None,
    device=None,
    batch_size: int = 64,
) -> Path:
    """The first ``n_images`` clean images (all if None) at ImageNet-C's five severities, their
    draws seeded by ``seed`` (the config's root ``seed``).

    Same columns as a shard plus ``severity`` (1-5); the severities are checked against the
    parameters' valid ranges, not the sampled domain (a narrowed domain may exclude them). The
    whole set in one file; the workflow writes it in shards (:func:`generate_imagenet_c_shard`),
    whose rows together are this file's.
    """
    rows = imagenet_c_rows(corruption, clean_set, seed, n_images)
    meta = {"n_images": len(rows) // len(corruption.imagenet_c)}
    return _write_imagenet_c(
        corruption, clean_set, rows, out_path, vif_settings, device, batch_size, "", meta
    )


def _write_imagenet_c(
    corruption, clean_set, rows, out_path, vif_settings, device, batch_size, label, meta
) -> Path:
    """Write ImageNet-C rows: parameters checked against their limits (a config may narrow the
    sampled domain below the severities), ``severity`` kept; ImageNet-C's function whatever
    variant the corruption's VCR sets use (:meth:`Corruption.for_imagenet_c`)."""
    return _write_set(
        corruption.for_imagenet_c(),
        clean_set,
        rows,
        out_path,
        vif_settings,
        device,
        batch_size,
        "limits",
        extra=("severity",),
        desc=f"{corruption.name} ImageNet-C {label}".rstrip(),
        meta={"source": "imagenet-c", **meta},
    )


def _write_set(
    corruption: Corruption,
    clean_set,
    rows: pd.DataFrame,
    out_path: str | os.PathLike,
    vif_settings: VifSettings,
    device,
    batch_size: int,
    within: str,
    extra: Sequence[str],
    desc: str,
    meta: Mapping,
) -> Path:
    """Corrupt, measure and stream ``rows`` to ``out_path`` (``extra``: int64 columns kept)."""
    batches = _sample_rows(
        corruption,
        clean_set,
        rows,
        corruption.param_columns,
        vif_settings,
        device,
        batch_size,
        within,
        extra=extra,
        desc=desc,
    )
    schema = _schema(corruption, extra=[(c, pa.int64()) for c in extra])
    meta = {
        "corruption": corruption.describe(),
        "vif_variant": vif_settings.variant,
        "bins": N_BINS,
        **meta,
    }
    meta.update(measure.pipeline_of(clean_set, vif_settings))
    return io.write_image_batches(out_path, schema, batches, meta)
