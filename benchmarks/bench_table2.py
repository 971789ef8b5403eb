"""Table 2 of the paper as a check: Δv coverage of ImageNet-C and of VCR test sets drawn as the
paper drew them (c ~ U(C) on its authors' domains, the domain set ``paper``), for its 9 corruptions.

On the images the project has (the embedded clean set, 10 images at 224²) and scaled down:

- **VCR**: ``--n`` parameter-uniform samples per corruption on the paper's domains (motion blur:
  ``motion_blur_line``, the line kernel the toolbox generated it with), every one
  corrupted and measured. Printed: the coverage of those samples (threshold 20 scaled to N, as the
  workflow scales it: at least 1), and the expected coverage of the paper's N = 50,000 with its
  threshold 20, from the bin probabilities the samples estimate (a bin they never hit counts as
  uncovered, so rare bins make it an underestimate).
- **ImageNet-C**: the 10 images at the five severities (50 samples), coverage at the same threshold
  as the VCR column (the workflow's rule): the paper's set has 250,000 samples of 50,000 images.

Coverage: 40 bins, bins 0..38 counted (k/39). Single threads per worker process.

    python benchmarks/bench_table2.py [--n 1000] [--workers 2] [--corruptions a,b] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

for _key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_key, "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from bench_sampling import PAPER_VCR, _init, measure_dv  # noqa: E402
from scipy.stats import binom  # noqa: E402

from vcrbench import coverage, measure, sampling  # noqa: E402
from vcrbench.bins import counts_per_bin, scaled_min_count  # noqa: E402
from vcrbench.corruptions import get_corruption  # noqa: E402
from vcrbench.datasets import CleanSet, prepare_clean_set, read_embedded_dataset  # noqa: E402
from vcrbench.seeding import derive_seed  # noqa: E402
from vcrbench.vocab import COVERAGE_DENOMINATOR, N_BINS  # noqa: E402

#: The paper's ImageNet-C coverage (Table 2, the ImageNet-C column).
PAPER_IMAGENET_C = {
    "brightness": 0.590,
    "gaussian_blur": 0.564,
    "defocus_blur": 0.538,
    "shot_noise": 0.462,
    "frost": 0.436,
    "gaussian_noise": 0.436,
    "impulse_noise": 0.385,
    "motion_blur": 0.333,
    "glass_blur": 0.333,
}
PAPER_N, PAPER_MIN_COUNT = 50_000, 20
#: The corruption whose VCR set a row draws, where it is not the row's own: the toolbox's generator
#: made motion blur with Albumentations' line kernel, ImageNet-C's sets with ImageNet-C's function.
VCR_CORRUPTION = {"motion_blur": "motion_blur_line"}


def expected_coverage_at(p: np.ndarray, n: int, min_count: int) -> float:
    """E[coverage] of n iid samples with bin probabilities p and a fixed threshold."""
    covered = binom.sf(min_count - 1, n, p[:COVERAGE_DENOMINATOR])
    return float(covered.sum() / COVERAGE_DENOMINATOR)


def imagenet_c_dv(c, clean: CleanSet) -> np.ndarray:
    """Δv of every clean image at the five severities."""
    ids = list(clean.image_ids)
    imgs = clean.images(ids)
    out = []
    for severity, params in enumerate(c.imagenet_c, start=1):
        p = {k: np.full(len(ids), v) for k, v in params.items()}
        seeds = [derive_seed(0, "imagenet-c", c.name, severity, i) for i in ids]
        corrupted = measure.corrupt_batch(c, imgs, p, seeds, within="limits")
        out.append(measure.visual_change(imgs, corrupted)[1])
    return np.concatenate(out)


def job(name: str, folder: str, n: int) -> dict:
    clean = CleanSet.open(f"{folder}/images.npy", f"{folder}/index.parquet")
    c = get_corruption(name, {"domain_set": "paper"})
    v = get_corruption(VCR_CORRUPTION.get(name, name), {"domain_set": "paper"})
    start = time.perf_counter()
    m = sampling.make_manifest(v, clean, n, n, seed=21, mode="parameter-uniform")
    vcr = measure_dv(v, clean, m)
    return {
        "name": name,
        "vcr_corruption": v.name,
        "domain": {k: list(x) for k, x in v.domain.items()},
        "vcr_dv": vcr.tolist(),
        "imagenet_c_dv": imagenet_c_dv(c, clean).tolist(),
        "seconds": time.perf_counter() - start,
    }


def per_corruption(job, names: list[str], workers: int, *args) -> list[dict]:
    """``job(name, clean-set folder, *args)`` for every corruption, on the embedded clean set at
    224², in ``workers`` single-threaded processes."""
    with tempfile.TemporaryDirectory() as tmp:
        prepare_clean_set(read_embedded_dataset(), f"{tmp}/images.npy", f"{tmp}/index.parquet")
        with ProcessPoolExecutor(workers, initializer=_init) as ex:
            k = len(names)
            return list(ex.map(job, names, [tmp] * k, *[[a] * k for a in args]))


def finish(start: float, args, payload) -> None:
    """Print the wall time and the load; write ``payload`` to ``--json`` if given."""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nwall {time.perf_counter() - start:.0f} s, {args.workers} workers; load at end {load}")
    if args.json:
        Path(args.json).write_text(json.dumps(payload))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="VCR samples per corruption")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", default=None, help="also write the results here")
    parser.add_argument(
        "--corruptions", default=None, help="comma-separated rows of Table 2 (default all nine)"
    )
    args = parser.parse_args()
    names = args.corruptions.split(",") if args.corruptions else list(PAPER_VCR)
    unknown = sorted(set(names) - set(PAPER_VCR))
    if unknown:
        parser.error(f"not in Table 2: {unknown}; its rows: {', '.join(PAPER_VCR)}")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"# Table 2 check: paper domains, parameter-uniform, N = {args.n}; load {load}")
    start = time.perf_counter()
    results = {r["name"]: r for r in per_corruption(job, names, args.workers, args.n)}
    m = scaled_min_count(args.n)
    print(
        f"\nthreshold {m} image(s) per bin at N = {args.n} (20 at 50,000, scaled); ImageNet-C: "
        f"10 images x 5 severities, same threshold\n"
    )
    head = (
        f"{'corruption':15s} {'IN-C here':>9s} {'paper':>6s}   {'VCR here':>8s} "
        f"{'E@50k':>6s} {'paper':>6s}  Δv range here"
    )
    print(head)
    rows = []
    for name in names:
        r = results[name]
        vcr, inc = np.asarray(r["vcr_dv"]), np.asarray(r["imagenet_c_dv"])
        cov_vcr = coverage.coverage(vcr, min_count=m)["coverage"]
        cov_inc = coverage.coverage(inc, min_count=m)["coverage"]
        p = counts_per_bin(vcr, N_BINS) / len(vcr)
        expected = expected_coverage_at(p, PAPER_N, PAPER_MIN_COUNT)
        row = {
            "corruption": name,
            "vcr_corruption": r["vcr_corruption"],
            "imagenet_c": cov_inc,
            "paper_imagenet_c": PAPER_IMAGENET_C[name],
            "vcr": cov_vcr,
            "vcr_expected_50k": expected,
            "paper_vcr": PAPER_VCR[name],
            "vcr_dv_min": float(vcr.min()),
            "vcr_dv_max": float(vcr.max()),
            "domain": r["domain"],
            "seconds": r["seconds"],
        }
        rows.append(row)
        print(
            f"{name:15s} {cov_inc:9.3f} {PAPER_IMAGENET_C[name]:6.3f}   {cov_vcr:8.3f} "
            f"{expected:6.3f} {PAPER_VCR[name]:6.3f}  {vcr.min():.2f}-{vcr.max():.2f}",
            flush=True,
        )
    finish(start, args, {"n": args.n, "min_count": m, "rows": rows})


if __name__ == "__main__":
    sys.exit(main())
