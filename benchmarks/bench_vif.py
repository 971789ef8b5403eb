"""Δv speed on one core: vcrbench.vif (batched) against the straightforward per-image reference.

Both run in one process on the same 224x224 pairs (the astronaut of docs/method.md §1, corrupted by
imagecorruptions at severities 1-5), one thread each, so that their ratio holds whatever the
machine's load; the load average is printed before and after. Times are CPU time of this process
(``time.process_time``), the minimum over repeats, next to wall time.

    python benchmarks/bench_vif.py [--repeats 5] [--batch 64] [--torch] [--port vif_utils.py]

``--port`` times the paper's port itself in the same run: the path of a copy of
``vif_utils.py`` from github.com/abhinaukumar/vif (MIT; not shipped here), whose ``vif(ref, dist)``
is called per pair.
"""

from __future__ import annotations

import os

# One core: set before numpy / scipy / torch / numba load their thread pools.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit"))

CORRUPTIONS = ("gaussian_noise", "gaussian_blur", "brightness", "jpeg_compression", "motion_blur")


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def pairs_uint8() -> tuple[np.ndarray, np.ndarray]:
    """Clean and corrupted uint8 astronauts, 5 corruptions x 5 severities."""
    from imagecorruptions import corrupt
    from skimage import data

    from vcrbench.datasets.loading import resize_center_crop

    img = resize_center_crop(data.astronaut(), 256, 224)
    rng = np.random.default_rng(0)
    corrupted = []
    for name in CORRUPTIONS:
        for severity in range(1, 6):
            if name == "gaussian_noise":  # imagecorruptions' formula, seeded locally
                sigma = (0.08, 0.12, 0.18, 0.26, 0.38)[severity - 1]
                noisy = np.clip(img / 255.0 + rng.normal(size=img.shape, scale=sigma), 0, 1)
                corrupted.append(np.uint8(noisy * 255))
            else:
                corrupted.append(corrupt(img, corruption_name=name, severity=severity))
    corrupted = np.stack(corrupted)
    return np.broadcast_to(img, corrupted.shape).copy(), corrupted


def load_port(path: Path):
    """``vif`` of a copy of the port's ``vif_utils.py``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("port_vif_utils", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"--port: cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.vif


def timed(fn, repeats: int) -> tuple[float, float]:
    """(min CPU seconds, min wall seconds) over ``repeats`` calls."""
    cpu, wall = [], []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return min(cpu), min(wall)


def main() -> None:
    args = _parse_args()

    import torch

    torch.set_num_threads(1)
    from vif_reference import vif_reference

    from vcrbench import vif as V

    print(f"machine: {cpu_name()}; python {platform.python_version()}, numpy {np.__version__}")
    print(f"before: {load()}")
    clean, corrupted = pairs_uint8()
    n = len(clean)
    x, y = V.luma(clean), V.luma(corrupted)
    reps = -(-args.batch // n)
    big_x, big_y = np.tile(x, (reps, 1, 1))[: args.batch], np.tile(y, (reps, 1, 1))[: args.batch]
    V.vif(x[:2], y[:2])  # compile the numba kernels, plan the FFTs

    ref_values = []
    ref_cpu, ref_wall = timed(
        lambda: ref_values.append([vif_reference(a, b) for a, b in zip(x, y, strict=True)]),
        max(1, args.repeats // 2),
    )
    fast = V.vif(x, y)
    rows = [("reference, per image (tests/unit/vif_reference.py)", n, ref_cpu, ref_wall)]
    port_values = None
    if args.port is not None:
        port_values, port_cpu, port_wall = _time_port(args.port, x, y, args.repeats)
        rows.insert(0, (f"the paper's port, per image ({args.port.name})", n, port_cpu, port_wall))
    rows += _vcrbench_rows(V, clean, corrupted, (x, y), (big_x, big_y), args)
    print(f"after: {load()}")
    print(f"pairs: astronaut 224x224, {', '.join(CORRUPTIONS)} at severities 1-5 ({n} pairs)")
    for name, values in (("reference", np.array(ref_values[-1])), ("port", port_values)):
        if values is not None:
            diff = np.abs(np.clip(1 - fast, 0, 1) - np.clip(1 - values, 0, 1)).max()
            print(f"max |Δv(vcrbench.vif) - Δv({name})| over them: {diff:.1e}")
    print(f"{'':64s} {'CPU ms/pair':>12s} {'wall ms/pair':>13s} {'speed-up':>9s}")
    base_cpu = port_cpu if args.port is not None else ref_cpu
    ref_ms = 1e3 * base_cpu / n  # speed-ups against the port when given, else the reference
    for name, count, cpu, wall in rows:
        ms = 1e3 * cpu / count
        print(f"{name:64s} {ms:12.2f} {1e3 * wall / count:13.2f} {ref_ms / ms:8.1f}x")


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timing repeats (minimum kept)")
    parser.add_argument("--batch", type=int, default=64, help="pairs in the large-batch timing")
    parser.add_argument("--torch", action="store_true", help="also time the torch path on CPU")
    parser.add_argument("--port", type=Path, help="path of a copy of the port's vif_utils.py")
    return parser.parse_args()


def _time_port(path: Path, x: np.ndarray, y: np.ndarray, repeats: int):
    """(VIF of every pair, min CPU seconds, min wall seconds) of the port's ``vif``, per pair."""
    port_vif = load_port(path)
    port_runs = []
    port_cpu, port_wall = timed(
        lambda: port_runs.append([port_vif(a, b) for a, b in zip(x, y, strict=True)]),
        max(1, repeats // 2),
    )
    return np.array(port_runs[-1]), port_cpu, port_wall


def _vcrbench_rows(V, clean, corrupted, pairs, big_pairs, args) -> list[tuple]:
    """(name, pairs, CPU seconds, wall seconds) of each timing of vcrbench.vif: batched, a large
    batch, delta_v on RGB, one pair at a time and (``--torch``) the torch path on CPU."""
    (x, y), (big_x, big_y), n = pairs, big_pairs, len(clean)
    rows = [
        (
            f"vcrbench.vif.vif, numpy+numba, batch of {n}",
            n,
            *timed(lambda: V.vif(x, y), args.repeats),
        )
    ]
    rows.append(
        (
            f"vcrbench.vif.vif, numpy+numba, batch of {args.batch}",
            args.batch,
            *timed(lambda: V.vif(big_x, big_y), args.repeats),
        )
    )
    rows.append(
        (
            f"vcrbench.vif.delta_v on uint8 RGB (luma included), batch of {n}",
            n,
            *timed(lambda: V.delta_v(clean, corrupted), args.repeats),
        )
    )
    rows.append(
        (
            "vcrbench.vif.vif, one pair at a time",
            n,
            *timed(lambda: [V.vif(a, b) for a, b in zip(x, y, strict=True)], args.repeats),
        )
    )
    if args.torch:
        V.vif(x[:2], y[:2], device="cpu")
        rows.append(
            (
                f"vcrbench.vif.vif, torch CPU, batch of {n}",
                n,
                *timed(lambda: V.vif(x, y, device="cpu"), args.repeats),
            )
        )
    return rows


if __name__ == "__main__":
    main()
