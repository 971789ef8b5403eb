"""Shard codecs and the data path of an inference job: size, decode speed, images/s per worker.

Prints three tables (a script that prints figures, not a test):

1. **Codecs per image**, on realistic 224x224 images: the embedded clean images and corrupted
   versions of them (noise compresses badly, blur and brightness well), parameters drawn
   parameter-uniformly from the calibrated domains. For each lossless candidate (raw bytes, raw +
   LZ4, raw + zstd 1 and 3, PNG, WebP lossless when Pillow has it): KiB per image, encode and
   decode ms per image on one core, and a check that the decoded pixels equal the originals.
2. **The loader**: shards of distinct images of the same kinds (``--per-set`` per corruption,
   shuffled) in several layouts (the older per-row binary column
   with zstd 3 and row groups of 64, the fixed-size column with each codec and row-group size),
   read by the inference job's own reader (``ShardBatches`` in a torch ``DataLoader``, batches of
   uint8 NHWC images, pinned when CUDA is there) with 0, 1 and 2 workers. Per layout: KiB per image
   on disk; images/s over the wall time, per worker; and the CPU seconds the workers spent per
   image, whose inverse is what one worker delivers on a core of its own. Wall figures depend on
   the machine's load; the CPU figures much less, and every layout's ratio to the chosen one is
   taken within the same repeat.
3. The chosen layout against published PyTorch mixed-precision ResNet-50 inference rates and the
   target of 2,500 images/s per worker (8 workers: 20,000 images/s).

    python benchmarks/bench_loader.py [--per-set 256] [--codec-images 48] [--repeats 3]

NCHW batches are a ``permute(0, 3, 1, 2)`` view of these NHWC ones (the model's preprocessing
permutes on the device), so they cost nothing here.
"""

from __future__ import annotations

import argparse
import io as pyio
import os
import platform
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import cv2  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402
import torch  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402

from vcrbench.corruptions import get_corruption  # noqa: E402
from vcrbench.datasets.loading import CleanSet, prepare_clean_set, read_embedded_dataset  # noqa: E402
from vcrbench.files import io  # noqa: E402
from vcrbench.inference.readers import ShardBatches, read_shard_metadata, worker_init  # noqa: E402
from vcrbench.testsets import measure, sampling  # noqa: E402

CORRUPTIONS = (
    "gaussian_noise",
    "shot_noise",
    "impulse_noise",
    "gaussian_blur",
    "defocus_blur",
    "brightness",
    "contrast",
    "frost",
)

#: Published PyTorch mixed-precision ResNet-50 inference rates (images/s), with their sources.
PUBLISHED = (
    (
        "RTX 4090, PyTorch 2.4 AMP, batch 1024 (timm results/"
        "benchmark-infer-amp-nchw-pt240-cu124-rtx4090.csv, resnet50 @224)",
        4217.6,
    ),
    (
        "V100 16 GB, PyTorch AMP, batch 256 (NVIDIA DeepLearningExamples, "
        "PyTorch/Classification/ConvNets/resnet50v1.5/README.md, pytorch-21.03 container)",
        3382.0,
    ),
)
TARGET_PER_WORKER = 2500


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# --------------------------------------------------------------------------- images


def realistic_sets(per_set: int, folder: Path) -> dict[str, np.ndarray]:
    prepare_clean_set(read_embedded_dataset(), folder / "images.npy", folder / "index.parquet")
    clean = CleanSet.open(folder / "images.npy", folder / "index.parquet")
    sets = {"clean": clean.images(clean.image_ids)}
    for name in CORRUPTIONS:
        c = get_corruption(name)
        m = sampling.make_manifest(c, clean, per_set, per_set, seed=0, mode="parameter-uniform")
        params = {k[len("param.") :]: m[k].to_numpy() for k in c.param_columns}
        images = clean.images(m["image_id"].tolist())
        sets[name] = measure.corrupt_batch(c, images, params, m["seed"].to_numpy())
    return sets


# --------------------------------------------------------------------------- 1. codecs


def _pil_webp(image: np.ndarray) -> bytes:
    from PIL import Image

    buf = pyio.BytesIO()
    Image.fromarray(image).save(buf, "WEBP", lossless=True, method=0, quality=0)
    return buf.getvalue()


def _pil_decode(data: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(pyio.BytesIO(data)).convert("RGB"))


def codecs() -> dict:
    size = 224 * 224 * 3
    lz4, z1, z3 = pa.Codec("lz4"), pa.Codec("zstd", 1), pa.Codec("zstd", 3)

    def raw_dec(b):
        return np.frombuffer(b, np.uint8)

    table = {
        "raw": (lambda a: a.tobytes(), raw_dec),
        "raw+lz4": (
            lambda a: lz4.compress(a.tobytes(), asbytes=True),
            lambda b: raw_dec(lz4.decompress(b, size, asbytes=True)),
        ),
        "raw+zstd1": (
            lambda a: z1.compress(a.tobytes(), asbytes=True),
            lambda b: raw_dec(z1.decompress(b, size, asbytes=True)),
        ),
        "raw+zstd3": (
            lambda a: z3.compress(a.tobytes(), asbytes=True),
            lambda b: raw_dec(z3.decompress(b, size, asbytes=True)),
        ),
        # OpenCV works in BGR; the round trip swaps twice, so RGB in gives RGB out.
        "png1": (
            lambda a: cv2.imencode(".png", a, [cv2.IMWRITE_PNG_COMPRESSION, 1])[1].tobytes(),
            lambda b: cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_UNCHANGED),
        ),
    }
    from PIL import features

    if features.check("webp"):
        table["webp-lossless"] = (_pil_webp, _pil_decode)
    return table


def best_time(fn, items, repeats: int) -> tuple[list, float]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = [fn(x) for x in items]
        best = min(best, time.perf_counter() - start)
    return out, best / len(items)


def codec_table(sets: dict[str, np.ndarray], repeats: int) -> None:
    table = codecs()
    print(f"\n## 1. Codecs per 224x224 image, one core (load {load()})")
    print("KiB per image / encode ms / decode ms; every decode checked equal to the original")
    print(f"{'set':16s}" + "".join(f"{k:>24s}" for k in table))
    totals = {k: [] for k in table}
    for name, images in sets.items():
        row = f"{name:16s}"
        items = list(images)
        for key, (enc, dec) in table.items():
            encoded, t_enc = best_time(enc, items, 1)
            decoded, t_dec = best_time(dec, encoded, repeats)
            for a, b in zip(items, decoded, strict=True):
                if not np.array_equal(np.asarray(b).reshape(a.shape), a):
                    raise SystemExit(f"codec {key} is not lossless on {name}")
            kib = np.mean([len(b) for b in encoded]) / 1024
            totals[key].append((kib, t_enc, t_dec))
            row += f"{kib:8.1f} {1e3 * t_enc:6.2f} {1e3 * t_dec:6.2f}  "
        print(row, flush=True)
    row = f"{'mean of sets':16s}"
    for key in table:
        kib, t_enc, t_dec = np.mean(totals[key], axis=0)
        row += f"{kib:8.1f} {1e3 * t_enc:6.2f} {1e3 * t_dec:6.2f}  "
    print(row)


# --------------------------------------------------------------------------- 2. loader


def shard_frame_columns(images: np.ndarray, start: int) -> dict:
    n = len(images)
    return {
        "sample_id": np.arange(start, start + n, dtype=np.int64),
        "image_id": [f"img-{i}" for i in range(start, start + n)],
        "label": np.zeros(n, dtype=np.int64),
        "dv": np.linspace(0, 1, n),
        "height": np.full(n, images.shape[1], dtype=np.int64),
        "width": np.full(n, images.shape[2], dtype=np.int64),
    }


SCHEMA = pa.schema(
    [
        ("sample_id", pa.int64()),
        ("image_id", pa.string()),
        ("label", pa.int64()),
        ("dv", pa.float64()),
        ("height", pa.int64()),
        ("width", pa.int64()),
        ("image", pa.binary()),
    ]
)

#: name -> (layout, codec, level, row group); "old" is the layout before this benchmark.
LAYOUTS = {
    "old: binary zstd3 rg64": ("binary", "zstd", 3, 64),
    "fixed zstd1 rg256": ("fixed", "zstd", 1, 256),
    "fixed lz4 rg64": ("fixed", "lz4", None, 64),
    "fixed lz4 rg256": ("fixed", "lz4", None, 256),
    "fixed none rg256": ("fixed", "none", None, 256),
}
CHOSEN = "fixed lz4 rg256"


def write_layout(folder: Path, images: np.ndarray, spec, shard_size: int) -> list[Path]:
    layout, codec, level, rows = spec
    paths = []
    for k, start in enumerate(range(0, len(images), shard_size)):
        part = images[start : start + shard_size]
        path = folder / f"shard-{k:05d}.parquet"
        if layout == "binary":
            df = pd.DataFrame(
                {**shard_frame_columns(part, start), "image": [io.encode_image(i) for i in part]}
            )
            io.write_parquet(df, path, row_group_size=rows)
        else:
            batches = (
                {
                    **shard_frame_columns(part[s : s + 64], start + s),
                    "image": io.image_column(part[s : s + 64]),
                }
                for s in range(0, len(part), 64)
            )
            io.write_image_batches(
                path, SCHEMA, batches, row_group_size=rows, codec=codec, codec_level=level
            )
        paths.append(path)
    return paths


def children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def own_cpu() -> float:
    t = os.times()
    return t.user + t.system


def read_all(paths, batch_size: int, workers: int, pin: bool) -> tuple[float, float, float, int]:
    """(wall s, workers' CPU s, this process's CPU s, images) of one pass over the shards."""
    _, units = read_shard_metadata(paths)
    loader = DataLoader(
        ShardBatches(units, batch_size),
        batch_size=None,
        num_workers=workers,
        pin_memory=pin,
        worker_init_fn=worker_init if workers else None,
    )
    kids, mine = children_cpu(), own_cpu()
    start = time.perf_counter()
    n = 0
    for _, batch in loader:
        n += len(batch)
    wall = time.perf_counter() - start
    del loader  # workers exit and are reaped: their CPU time is counted now
    return wall, children_cpu() - kids, own_cpu() - mine, n


def loader_table(images, folder, batch_size, shard_size, workers_list, repeats):
    pin = torch.cuda.is_available()
    print(
        f"\n## 2. Loader: {len(images)} images in shards of {shard_size}, batch {batch_size}, "
        f"{'pinned' if pin else 'NOT pinned (no CUDA here: torch cannot pin host memory)'} "
        f"(load {load()})"
    )
    paths, sizes = {}, {}
    for name, spec in LAYOUTS.items():
        sub = folder / name.replace(" ", "_").replace(":", "")
        sub.mkdir()
        paths[name] = write_layout(sub, images, spec, shard_size)
        sizes[name] = sum(p.stat().st_size for p in paths[name]) / len(images) / 1024
    best: dict = {}
    ratios: dict = {}
    for _ in range(repeats):  # interleaved: each repeat measures every layout once
        this: dict = {}
        for workers in workers_list:
            for name in LAYOUTS:
                wall, kids, mine, n = read_all(paths[name], batch_size, workers, pin)
                cpu = kids if workers else mine
                this[name, workers] = (n / wall, cpu / n, mine / n)
                old = best.get((name, workers), (0.0, float("inf"), float("inf")))
                best[name, workers] = (
                    max(old[0], n / wall),
                    min(old[1], cpu / n),
                    min(old[2], mine / n),
                )
        for key, (rate, cpu, _) in this.items():
            ref_rate, ref_cpu, _ = this[CHOSEN, key[1]]
            ratios.setdefault(key, []).append((rate / ref_rate, cpu / ref_cpu))
    print(
        f"{'layout':26s}{'KiB/img':>8s}{'workers':>8s}{'wall img/s':>11s}{'per worker':>11s}"
        f"{'cpu ms/img':>11s}{'img/cpu-s':>10s}{'main ms/img':>12s}"
        f"{'wall vs chosen':>15s}{'cpu vs chosen':>14s}"
    )
    for workers in workers_list:
        for name in LAYOUTS:
            rate, cpu, mine = best[name, workers]
            r_wall, r_cpu = np.median(ratios[name, workers], axis=0)
            per = rate / max(workers, 1)
            print(
                f"{name:26s}{sizes[name]:8.1f}{workers:8d}{rate:11.0f}{per:11.0f}"
                f"{1e3 * cpu:11.3f}{1 / cpu:10.0f}{1e3 * mine:12.3f}"
                f"{r_wall:15.2f}{r_cpu:14.2f}",
                flush=True,
            )
    return best


def summary(best, workers_list) -> None:
    print("\n## 3. Against published ResNet-50 rates (PyTorch, mixed precision)")
    for what, rate in PUBLISHED:
        print(f"- {rate:8.0f} images/s: {what}")
    print(f"- target: {TARGET_PER_WORKER} images/s per worker, 8 workers >= 20,000 images/s")
    for workers in workers_list:
        if workers == 0:
            continue
        rate, cpu, _ = best[CHOSEN, workers]
        print(
            f"{CHOSEN}, {workers} worker(s): {rate / workers:.0f} images/s per worker over the wall "
            f"time on this machine, {1 / cpu:.0f} per worker-CPU-second "
            f"({'meets' if 1 / cpu >= TARGET_PER_WORKER else 'misses'} the target on a core of "
            f"its own; 8 such workers: {8 / cpu:,.0f} images/s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--per-set", type=int, default=256, help="distinct images per corrupted set (part 2)"
    )
    parser.add_argument("--codec-images", type=int, default=48, help="images per set in part 1")
    parser.add_argument("--shard-size", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip", default="", help="comma-separated parts to skip (1,2)")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    torch.set_num_threads(1)
    skip = set(args.skip.split(",")) - {""}
    print(
        f"# Loader benchmark: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"torch {torch.__version__}, pyarrow {pa.__version__}, load {load()}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-loader-") as tmp:
        tmp = Path(tmp)
        (tmp / "clean").mkdir()
        sets = realistic_sets(args.per_set, tmp / "clean")
        if "1" not in skip:
            codec_table({k: v[: args.codec_images] for k, v in sets.items()}, args.repeats)
        if "2" not in skip:
            # Every image distinct (a repeated image would compress as no real shard does).
            pool = np.concatenate(list(sets.values()))
            pool = pool[np.random.default_rng(0).permutation(len(pool))]
            best = loader_table(
                pool, tmp, args.batch_size, args.shard_size, args.workers, args.repeats
            )
            summary(best, args.workers)
    print(f"\nload at the end: {load()}")


if __name__ == "__main__":
    main()
