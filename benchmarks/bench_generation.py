"""Throughput and memory of test-set generation (corrupt + Δv + write), on 224x224 images.

Prints three tables (a script that prints figures, not a test):

1. per corruption, one process on one core (BLAS/torch/OpenCV threads = 1): images/s for the
   whole of ``generate_shard`` and the share of it spent corrupting and computing Δv;
2. the whole stage on 2 cores: one shard per corruption, each in a fresh process (as the
   workflow's ``generate_shard`` jobs run), two at a time; images/s over the wall time, with each
   job's start-up (imports) apart;
3. peak resident memory of a process that generates every shard of one corruption, for two
   sizes of the test set (same shard size): memory is bounded by the batch/shard, not N.

    python benchmarks/bench_generation.py [--per-corruption 64] [--stage-shard 1000] [--shard-size 64]
        [--corruptions a,b] [--figures-out src/vcrbench/data/planning/generation.json]

Parameters are drawn parameter-uniformly from the calibrated domains; the clean set is the
embedded images (224², resized and cropped as for ImageNet). The machine's load is printed:
other processes share it, and figures scale with what they leave.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ONE_THREAD = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
}
for key, value in ONE_THREAD.items():
    os.environ.setdefault(key, value)

import numpy as np  # noqa: E402

from vcrbench.corruptions import get_corruption, list_corruptions  # noqa: E402
from vcrbench.datasets.loading import CleanSet, prepare_clean_set, read_embedded_dataset  # noqa: E402
from vcrbench.files import io  # noqa: E402
from vcrbench.testsets import measure, sampling, testset  # noqa: E402


def single_thread() -> None:
    import cv2
    import torch

    torch.set_num_threads(1)
    cv2.setNumThreads(1)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def make_clean_set(folder: Path) -> CleanSet:
    prepare_clean_set(read_embedded_dataset(), folder / "images.npy", folder / "index.parquet")
    return CleanSet.open(folder / "images.npy", folder / "index.parquet")


class Timed:
    """Wraps a function and accumulates the seconds spent in it."""

    def __init__(self, fn):
        self.fn, self.seconds = fn, 0.0

    def __call__(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return self.fn(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start


def per_corruption(clean: CleanSet, n: int, out: Path, names: list[str] | None = None) -> dict:
    print(f"\n## 1. One core, per corruption ({n} images of 224x224 each, load {load()})")
    print(
        f"{'corruption':22s} {'img/s':>7s} {'ms/img':>7s} {'corrupt':>8s} {'dv':>6s} {'write':>6s}"
    )
    corrupt, dv_timer = Timed(measure.corrupt_batch), Timed(measure.visual_change)
    measure.corrupt_batch, measure.visual_change = corrupt, dv_timer
    rates, figures = [], {}
    try:
        for name in names or list_corruptions():
            c = get_corruption(name)
            m = sampling.make_manifest(c, clean, n, n, seed=0, mode="parameter-uniform")
            # Warm-up (numba compilation, FFT plans) outside the timing.
            warm = m.iloc[:2].copy()
            testset.generate_shard(warm, 0, clean, c, out / f"warm-{name}.parquet", batch_size=2)
            corrupt.seconds = dv_timer.seconds = 0.0
            start = time.perf_counter()
            testset.generate_shard(m, 0, clean, c, out / f"{name}.parquet")
            wall = time.perf_counter() - start
            rest = wall - corrupt.seconds - dv_timer.seconds
            rates.append(n / wall)
            figures[name] = {
                "ms_per_image": round(1000 * wall / n, 3),
                "corrupt_ms": round(1000 * corrupt.seconds / n, 3),
                "dv_ms": round(1000 * dv_timer.seconds / n, 3),
                "write_ms": round(1000 * rest / n, 3),
                "kib_per_image": round((out / f"{name}.parquet").stat().st_size / n / 1024, 2),
            }
            print(
                f"{name:22s} {n / wall:7.1f} {1000 * wall / n:7.1f} "
                f"{1000 * corrupt.seconds / n:7.1f}ms {1000 * dv_timer.seconds / n:5.1f}ms "
                f"{1000 * rest / n:5.1f}ms",
                flush=True,
            )
    finally:
        measure.corrupt_batch, measure.visual_change = corrupt.fn, dv_timer.fn
    print(
        f"{'mean over corruptions':22s} {np.mean(rates):7.1f} (harmonic: {len(rates) / np.sum(1 / np.array(rates)):.1f})"
    )
    return figures


def write_figures(path: Path, figures: dict, n: int, load_before: str, merge: bool) -> None:
    """The per-corruption figures as JSON, with the machine, date and load they were measured at
    (``scripts/plan_cost.py`` reads them). With ``merge`` (some corruptions measured, not all),
    their entries are added to (or replace those in) the file, each with its own date and load."""
    import datetime
    import json

    if merge and path.is_file():
        doc = json.loads(path.read_text())
        when = f"{datetime.date.today().isoformat()}, load {load_before} before, {load()} after"
        doc["corruptions"].update({k: {**v, "measured": when} for k, v in figures.items()})
        path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
        print(f"figures of {', '.join(figures)} merged into {path}")
        return
    doc = {
        "what": (
            "generate_shard on one core per corruption: milliseconds per 224x224 image for the "
            "whole job step (corrupt + delta-v + write) and its parts; KiB per image of the "
            f"written shard; {n} images per corruption, parameter-uniform"
        ),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "date": datetime.date.today().isoformat(),
        "load_average_before": load_before,
        "load_average_after": load(),
        "corruptions": figures,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    print(f"figures written to {path}")


WORKER = """
import sys, time
t0 = time.perf_counter()
import cv2, torch
torch.set_num_threads(1); cv2.setNumThreads(1)
from vcrbench.files import io
from vcrbench.testsets import testset
from vcrbench.corruptions import get_corruption
from vcrbench.datasets.loading import CleanSet
folder, out, name, shard = sys.argv[1:5]
clean = CleanSet.open(f"{folder}/images.npy", f"{folder}/index.parquet")
m = io.read_parquet(f"{out}/{name}-manifest.parquet")
t1 = time.perf_counter()
testset.generate_shard(m, int(shard), clean, get_corruption(name), f"{out}/{name}-{shard}.parquet")
print(f"{t1 - t0:.2f} {time.perf_counter() - t1:.2f}")
"""


def stage(clean_dir: Path, clean: CleanSet, shard_size: int, out: Path) -> None:
    """One fresh process per shard, two at a time: what the workflow's generate_shard jobs do."""
    names = list_corruptions()
    for name in names:
        c = get_corruption(name)
        m = sampling.make_manifest(
            c, clean, shard_size, shard_size, seed=1, mode="parameter-uniform"
        )
        io.write_parquet(m, out / f"{name}-manifest.parquet")
    env = {**os.environ, **ONE_THREAD}
    # numba caches the glass-blur kernel on disk: compile it once, as a first run would.
    get_corruption("glass_blur").apply(
        clean.image(clean.image_ids[0]), {"sigma": 1, "max_delta": 1, "iterations": 1}, 0
    )
    pending, running, times = list(names), [], []
    start = time.perf_counter()
    while pending or running:
        while pending and len(running) < 2:
            name = pending.pop(0)
            cmd = [sys.executable, "-c", WORKER, str(clean_dir), str(out), name, "0"]
            running.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True))
        proc = running.pop(0)
        stdout, _ = proc.communicate()
        if proc.returncode:
            raise SystemExit(f"a shard job failed with exit code {proc.returncode}")
        times.append([float(x) for x in stdout.split()[-2:]])
    wall = time.perf_counter() - start
    total = shard_size * len(names)
    startup = np.mean([t[0] for t in times])
    work = np.mean([t[1] for t in times])
    print(f"\n## 2. Whole stage on 2 cores: {len(names)} shard jobs of {shard_size}, 2 at a time")
    print(
        f"{total} images in {wall:.1f} s: {total / wall:.1f} images/s; per job {startup:.1f} s "
        f"start-up (imports) + {work:.1f} s generating ({shard_size / work:.1f} images/s) "
        f"(load before: {load()})"
    )


MEMORY = """
import sys
from vcrbench.testsets import sampling, testset
from vcrbench.corruptions import get_corruption
from vcrbench.datasets.loading import CleanSet


def peak_mib():
    # VmHWM: this process's peak resident memory (ru_maxrss would include the parent's at fork).
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024


folder, out, n, shard_size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
c = get_corruption("gaussian_noise")
base = peak_mib()
clean = CleanSet.open(f"{folder}/images.npy", f"{folder}/index.parquet")
m = sampling.make_manifest(c, clean, n, shard_size, seed=2, mode="parameter-uniform")
for shard in sorted(m["shard"].unique()):
    testset.generate_shard(m, shard, clean, c, f"{out}/mem-{shard}.parquet")
print(base, peak_mib())
"""


def memory(clean_dir: Path, out: Path, shard_size: int, sizes=(256, 2048)) -> None:
    print(f"\n## 3. Peak memory of one process generating all shards (shard size {shard_size})")
    for n in sizes:
        res = subprocess.run(
            [sys.executable, "-c", MEMORY, str(clean_dir), str(out), str(n), str(shard_size)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, **ONE_THREAD},
        )
        base, peak = (float(x) for x in res.stdout.strip().splitlines()[-1].split())
        print(f"N = {n:6d}: peak RSS {peak:7.1f} MiB (after imports: {base:.1f} MiB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-corruption", type=int, default=64)
    parser.add_argument(
        "--stage-shard", type=int, default=1000, help="shard size of the 2-core stage run"
    )
    parser.add_argument("--shard-size", type=int, default=64)
    parser.add_argument("--skip", default="", help="comma-separated parts to skip (1,2,3)")
    parser.add_argument(
        "--corruptions",
        default="",
        help="comma-separated corruptions for part 1 (default: all); with --figures-out their "
        "figures are merged into the file",
    )
    parser.add_argument(
        "--figures-out",
        type=Path,
        default=None,
        help="write part 1's per-corruption figures as JSON here (e.g. "
        "src/vcrbench/data/planning/generation.json, read by scripts/plan_cost.py)",
    )
    args = parser.parse_args()
    single_thread()
    skip = set(args.skip.split(",")) - {""}
    print(
        f"# Generation benchmark: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, load {load()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        clean_dir = tmp / "clean"
        clean = make_clean_set(clean_dir)
        if "1" not in skip:
            (tmp / "one").mkdir()
            before = load()
            names = [c for c in args.corruptions.split(",") if c]
            figures = per_corruption(clean, args.per_corruption, tmp / "one", names)
            if args.figures_out is not None:
                write_figures(args.figures_out, figures, args.per_corruption, before, bool(names))
        if "2" not in skip:
            (tmp / "stage").mkdir()
            stage(clean_dir, clean, args.stage_shard, tmp / "stage")
        if "3" not in skip:
            (tmp / "mem").mkdir()
            memory(clean_dir, tmp / "mem", args.shard_size)
    print(
        f"\nload at the end: {load()}; own CPU time {resource.getrusage(resource.RUSAGE_SELF).ru_utime:.0f} s"
    )


if __name__ == "__main__":
    main()
