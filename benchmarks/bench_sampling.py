"""Coverage and cost of parameter-uniform vs Δv-uniform sampling, per corruption.

For every corruption:

1. a parameter-uniform pool of ``--pool`` samples with measured Δv gives the bin probabilities
   p_j, hence the expected coverage of parameter-uniform sampling at any N (a bin is covered when
   Binomial(N, p_j) reaches the scaled minimum count), and N*, the smallest N of the grid at which
   it reaches the paper's VCR coverage (Table 2; for the 9 corruptions it lists);
2. at a common N (the largest N* over those 9, capped by ``--cap``) Δv-uniform sampling is run
   for real: the manifest (with its pilot) is drawn, every sample is corrupted and measured, and
   its coverage and its cost -- (N + pilot) corruptions and Δv computations, relative to the N of
   parameter-uniform sampling -- are printed, beside the parameter-uniform coverage measured on
   the first N pool samples.

Coverage: 40 bins, bins 0..38 counted (denominator 39), minimum count 20 at N = 50,000 scaled to
N (at least 1). Clean set: the embedded images (224²). Two worker processes, one thread each.

    python benchmarks/bench_sampling.py [--pool 2000] [--cap 2000] [--corruptions a,b]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

# The script's own process: one BLAS/OpenMP thread (an importer keeps its own; workers: _init).
if __name__ == "__main__":
    for _key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(_key, "1")

import numpy as np  # noqa: E402
from scipy.stats import binom  # noqa: E402

from vcrbench.bins import counts_per_bin  # noqa: E402
from vcrbench.corruptions import get_corruption, list_corruptions  # noqa: E402
from vcrbench.datasets.loading import CleanSet, prepare_clean_set, read_embedded_dataset  # noqa: E402
from vcrbench.testsets import coverage, measure, sampling  # noqa: E402
from vcrbench.vocab import COVERAGE_DENOMINATOR, N_BINS  # noqa: E402

#: The paper's VCR coverage (Table 2, ImageNet-C -> VCR; the VCR column).
PAPER_VCR = {
    "brightness": 1.000,
    "gaussian_blur": 0.974,
    "defocus_blur": 0.923,
    "shot_noise": 0.590,
    "frost": 1.000,
    "gaussian_noise": 0.872,
    "impulse_noise": 0.641,
    "motion_blur": 0.974,
    "glass_blur": 0.949,
}
GRID = (250, 500, 1000, 2000, 5000, 10000, 20000, 50000)
BINS, DENOMINATOR = N_BINS, COVERAGE_DENOMINATOR


#: Workers started fresh, not forked: a fork of a process with threads (torch's, BLAS's, a test
#: runner's) can copy a held lock into the child, which then waits forever.
SPAWN = get_context("spawn")


def expected_coverage(p: np.ndarray, n: int) -> float:
    """E[coverage] of n iid samples with bin probabilities p (bins 0..DENOMINATOR-1)."""
    m = coverage.threshold(n)
    return float(binom.sf(m - 1, n, p[:DENOMINATOR]).sum() / DENOMINATOR)


def measure_dv(c, clean: CleanSet, frame, batch: int = 32) -> np.ndarray:
    dv = np.empty(len(frame))
    cols = [f"param.{p}" for p in c.param_names]
    for start in range(0, len(frame), batch):
        rows = frame.iloc[start : start + batch]
        imgs = clean.images(rows["image_id"].tolist())
        params = {col[6:]: rows[col].to_numpy() for col in cols}
        out = measure.corrupt_batch(c, imgs, params, rows["seed"].to_numpy())
        dv[start : start + batch] = measure.visual_change(imgs, out)[1]
    return dv


def _init() -> None:
    """A worker process's threads: one each for BLAS/OpenMP, torch and OpenCV."""
    import cv2
    import torch
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    torch.set_num_threads(1)
    cv2.setNumThreads(1)


def pool_job(name: str, folder: str, pool: int) -> dict:
    clean = CleanSet.open(f"{folder}/images.npy", f"{folder}/index.parquet")
    c = get_corruption(name)
    start = time.perf_counter()
    m = sampling.make_manifest(c, clean, pool, pool, seed=11, mode="parameter-uniform")
    dv = measure_dv(c, clean, m)
    return {"name": name, "dv": dv.tolist(), "seconds": time.perf_counter() - start}


def dv_job(name: str, folder: str, n: int) -> dict:
    clean = CleanSet.open(f"{folder}/images.npy", f"{folder}/index.parquet")
    c = get_corruption(name)
    start = time.perf_counter()
    m = sampling.make_manifest(c, clean, n, n, seed=11, mode="dv-uniform")
    manifest_s = time.perf_counter() - start
    dv = measure_dv(c, clean, m)
    info = m.attrs["sampling"]
    return {
        "name": name,
        "dv": dv.tolist(),
        "n_pilot": info["n_pilot"],
        "rounds": info["rounds"],
        "pilot_short_bins": info["pilot_short_bins"],
        "manifest_seconds": manifest_s,
        "seconds": time.perf_counter() - start,
    }


def main() -> None:
    args = _parse_args()
    names = args.corruptions.split(",") if args.corruptions else list_corruptions()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"# Sampling benchmark: {len(names)} corruptions, pool {args.pool}, load {load}", flush=True
    )
    with tempfile.TemporaryDirectory() as tmp:
        prepare_clean_set(read_embedded_dataset(), f"{tmp}/images.npy", f"{tmp}/index.parquet")
        with ProcessPoolExecutor(args.workers, initializer=_init, mp_context=SPAWN) as ex:
            pools = {
                r["name"]: r
                for r in ex.map(pool_job, names, [tmp] * len(names), [args.pool] * len(names))
            }
            n_star = _parameter_uniform_table(names, pools)
            stars = [n_star[k] or GRID[-1] for k in names if k in PAPER_VCR]
            n_common = min(max(stars) if stars else args.cap, args.cap)
            print(
                f"\nN* over the Table-2 corruptions: {max(stars) if stars else '-'}; run at N = {n_common}"
            )
            results = {
                r["name"]: r
                for r in ex.map(dv_job, names, [tmp] * len(names), [n_common] * len(names))
            }
    rows = _dv_uniform_table(names, pools, results, n_star, n_common, args.pool)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nload at the end: {load}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "rows": rows,
                    "pools": {k: v["dv"] for k, v in pools.items()},
                    "dv_uniform": {k: v["dv"] for k, v in results.items()},
                }
            )
        )


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", type=int, default=2000)
    parser.add_argument("--cap", type=int, default=2000, help="largest N run for real")
    parser.add_argument("--corruptions", default=None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", default=None, help="also write the results here")
    return parser.parse_args()


def _parameter_uniform_table(names: list[str], pools: dict) -> dict:
    """Print the expected coverage of parameter-uniform sampling by N, from each pool; return
    N* per corruption (None: not reached on the grid, or no paper figure)."""
    n_star = {}
    print("\n## Parameter-uniform: expected coverage (k/39) by N, from the pool")
    print(f"{'corruption':22s} " + " ".join(f"{n:>6d}" for n in GRID) + "   paper  N*")
    for name in names:
        counts = counts_per_bin(pools[name]["dv"], BINS)
        p = counts / counts.sum()
        covs = [expected_coverage(p, n) for n in GRID]
        paper = PAPER_VCR.get(name)
        star = next(
            (n for n, cv in zip(GRID, covs, strict=True) if paper and cv >= paper - 1e-9),
            None,
        )
        n_star[name] = star
        star_txt = "-" if paper is None else (str(star) if star else ">50000")
        print(
            f"{name:22s} "
            + " ".join(f"{cv:6.3f}" for cv in covs)
            + f"   {paper if paper is not None else '-':>5}  {star_txt}",
            flush=True,
        )
    return n_star


def _dv_uniform_table(
    names: list[str], pools: dict, results: dict, n_star: dict, n_common: int, pool: int
) -> list[dict]:
    """Print the coverage and cost of Δv-uniform sampling at ``n_common`` beside the
    parameter-uniform coverage of the pool's first ``n_common`` samples; return the rows."""
    m = coverage.threshold(n_common)
    print(f"\n## At N = {n_common} (min_count {m}): coverage and cost (corruptions + Δv, / N)")
    print(
        f"{'corruption':22s} {'param-uniform':>14s} {'dv-uniform':>11s} {'bins':>5s} {'cost':>6s} {'pilot':>6s} {'rounds':>6s}  short bins after pilot"
    )
    rows = []
    for name in names:
        pu = (
            coverage.coverage(np.asarray(pools[name]["dv"][:n_common]), min_count=m)
            if pool >= n_common
            else None
        )
        du = coverage.coverage(np.asarray(results[name]["dv"]), min_count=m)
        cost = (n_common + results[name]["n_pilot"]) / n_common
        rows.append(
            {
                "corruption": name,
                "n": n_common,
                "param_uniform_coverage": pu["coverage"] if pu else None,
                "dv_uniform_coverage": du["coverage"],
                "dv_uniform_covered_bins": du["covered_bins"],
                "cost_ratio": cost,
                "n_pilot": results[name]["n_pilot"],
                "paper_n_star": n_star[name],
            }
        )
        pu_txt = f"{pu['coverage']:.3f}" if pu else "-"
        print(
            f"{name:22s} {pu_txt:>14s} {du['coverage']:11.3f} {du['covered_bins']:5d} {cost:6.3f} "
            f"{results[name]['n_pilot']:6d} {results[name]['rounds']:6d}  {results[name]['pilot_short_bins']}",
            flush=True,
        )
        missing = [j for j in range(DENOMINATOR) if du["counts"][j] < m]
        if missing:
            print(f"{'':22s} uncovered bins: {missing}")
    return rows


if __name__ == "__main__":
    sys.exit(main())
