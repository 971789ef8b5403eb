"""Recovery accuracy, interval coverage and speed of vcrbench.estimation on synthetic data.

Draws Δv ~ U(0, 1) and outcomes ~ Bernoulli(s(Δv)) from known curves (a straight line, a
logistic, a step), anchors at the true s(0), and reports over many seeds: the area error
|R̂ - R|, the sup-norm error of the curve (for the step: away from the jump, |v - 0.5| > 0.05),
how often the 95% percentile interval of R̂ holds the true R, and the time per fit and per
estimate (fit + cross-validation + bootstrap).

    python benchmarks/bench_estimation.py [--seeds 50] [--n 10000] [--n-boot 200]

Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from vcrbench import estimation as E
from vcrbench.settings import EstimationSettings

CURVES = {
    "line": lambda v: 0.9 - 0.8 * v,
    "logistic": lambda v: 0.05 + 0.85 / (1 + np.exp((v - 0.6) / 0.07)),
    "step": lambda v: np.where(v < 0.5, 0.9, 0.1),
}


def sample(f, n, rng):
    dv = rng.uniform(0, 1, n)
    return dv, (rng.uniform(size=n) < f(dv))


def recovery(n: int, seeds: int, n_boot: int) -> None:
    grid = E.default_grid(EstimationSettings().grid_size)
    print(f"recovery: n={n}, {seeds} seeds, n_boot={n_boot}, uniform Δv, default settings")
    print("curve     area err mean/p95/max   sup err mean/p95/max   95% CI coverage  median lam")
    for name, f in CURVES.items():
        true = f(grid)
        r_true = np.trapezoid(true, grid)
        mask = np.abs(grid - 0.5) > 0.05 if name == "step" else np.ones_like(grid, bool)
        a_err, s_err, cover, lams = [], [], [], []
        for seed in range(seeds):
            rng = np.random.default_rng(1000 + seed)
            dv, y = sample(f, n, rng)
            est = E.estimate(
                dv, y, float(f(np.zeros(1))[0]), EstimationSettings(n_boot=n_boot), seed=seed
            )
            a_err.append(abs(est.area - r_true))
            s_err.append(np.abs(est.values - true)[mask].max())
            cover.append(est.area_lo <= r_true <= est.area_hi)
            lams.append(est.lam)
        a_err, s_err = np.array(a_err), np.array(s_err)
        print(
            f"{name:9s} {a_err.mean():.4f}/{np.quantile(a_err, 0.95):.4f}/{a_err.max():.4f}"
            f"      {s_err.mean():.4f}/{np.quantile(s_err, 0.95):.4f}/{s_err.max():.4f}"
            f"      {np.mean(cover):.2f}            {np.median(lams):.0e}"
        )


def _times(func, repeats: int) -> tuple[float, float]:
    """(best, median) wall time of ``func`` over ``repeats`` calls, in ms."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        func()
        times.append((time.perf_counter() - t) * 1e3)
    return min(times), float(np.median(times))


def timing(n: int, n_boot: int, repeats: int = 7) -> None:
    rng = np.random.default_rng(0)
    f = CURVES["logistic"]
    dv, y = sample(f, n, rng)
    a0 = float(f(np.zeros(1))[0])
    est = E.estimate(
        dv, y, a0, EstimationSettings(n_boot=5), seed=0
    )  # warm-up (imports, cached basis)
    groups = rng.integers(0, 100, n)
    rows = {
        "one fit at a fixed penalty (fit_curve)": lambda: E.fit_curve(
            dv, y, a0, EstimationSettings(lam=est.lam), seed=0
        ),
        f"fit + 5-fold CV over {len(E.LAMBDA_GRID)} penalties (estimate, n_boot=0)": lambda: (
            E.estimate(dv, y, a0, EstimationSettings(n_boot=0), seed=0)
        ),
        f"bootstrap, {n_boot} replicates at a fixed penalty": lambda: E.bootstrap(
            dv,
            y,
            a0,
            EstimationSettings(n_boot=n_boot, bootstrap_penalty="fixed"),
            seed=0,
            lam=est.lam,
        ),
        f"estimate(n_boot={n_boot})": lambda: E.estimate(
            dv, y, a0, EstimationSettings(n_boot=n_boot), seed=0
        ),
        f"estimate(n_boot={n_boot}, 100 groups)": lambda: E.estimate(
            dv, y, a0, EstimationSettings(n_boot=n_boot), seed=0, groups=groups
        ),
    }
    load = os.getloadavg()[0]
    print(f"timing on n={n} samples (logistic), {os.cpu_count()} cores, load {load:.2f}")
    print("  best / median of", repeats, "calls, ms")
    for label, func in rows.items():
        best, median = _times(func, repeats)
        print(f"  {label}: {best:.1f} / {median:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--n-boot", type=int, default=200)
    parser.add_argument("--skip-recovery", action="store_true")
    args = parser.parse_args()
    timing(args.n, args.n_boot)
    timing(50_000, args.n_boot, repeats=3)
    if not args.skip_recovery:
        recovery(args.n, args.seeds, args.n_boot)


if __name__ == "__main__":
    main()
