"""Cost of dv-stratified sampling per corruption: candidates drawn (each corrupted and measured)
per kept sample, and the bins it leaves short.

For every corruption, the manifest of ``--n`` samples is drawn for real on the embedded clean set
(10 images, 224²) with the domain set ``--domain-set`` (``paper`` by default, as config/paper.yaml)
and the default cap (``max_candidates`` = 10 candidates per sample). The cost per kept sample
hardly depends on N: a bin of probability p under U(C) needs about N/(39 p) candidates to hold its
N/39, i.e. 1/(39 p) per kept sample, until the cap. The shards then corrupt and measure the N kept
samples once more, so the whole generation costs (candidates + N) / N of parameter-uniform's.

    python benchmarks/bench_stratified.py [--n 200] [--domain-set paper] [--corruptions a,b]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# The script's own process: one BLAS/OpenMP thread (an importer keeps its own; workers: _init).
if __name__ == "__main__":
    for _key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(_key, "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_table2 import finish, per_corruption  # noqa: E402

from vcrbench.corruptions import domain_set, get_corruption  # noqa: E402
from vcrbench.datasets.loading import CleanSet  # noqa: E402
from vcrbench.testsets import coverage, sampling  # noqa: E402


def job(name: str, folder: str, n: int, which: str) -> dict:
    clean = CleanSet.open(f"{folder}/images.npy", f"{folder}/index.parquet")
    c = get_corruption(name, {"domain_set": which})
    start = time.perf_counter()
    m = sampling.make_manifest(c, clean, n, n, seed=31, mode="dv-stratified")
    seconds = time.perf_counter() - start
    cov = coverage.coverage(m["measured_dv"].to_numpy(), min_count=coverage.threshold(n))
    return {"name": name, **m.attrs["sampling"], "coverage": cov["coverage"], "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--domain-set", default="paper")
    parser.add_argument("--corruptions", default=None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args()
    names = args.corruptions.split(",") if args.corruptions else list(domain_set("paper"))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"# dv-stratified cost: domain set {args.domain_set}, N = {args.n}; load {load}")
    start = time.perf_counter()
    rows = per_corruption(job, names, args.workers, args.n, args.domain_set)
    print(
        f"\n{'corruption':22s} {'cand/sample':>11s} {'level':>5s} {'coverage':>8s} {'s':>6s}"
        "  bins never reached; reached too rarely to fill"
    )
    for r in rows:
        print(
            f"{r['name']:22s} {r['cost']:11.2f} {r['level']:5d} {r['coverage']:8.3f} "
            f"{r['seconds']:6.0f}  {r['unreached_strata']}; {r['short_strata']}",
            flush=True,
        )
    finish(start, args, rows)


if __name__ == "__main__":
    sys.exit(main())
