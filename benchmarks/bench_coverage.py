"""Coverage of the 95% interval of R̂ by simulation, on the two designs the workflow meets.

A population of images, each with its own accuracy curve p_i(v) = σ(a_i − b v), a_i ~ N(μ, τ²)
(images differ: some are easy, some hard); the estimand is the population curve
s(v) = E_a σ(a − b v) (Gauss–Hermite) and its area R. Each simulated test set draws images from
the population, Δv ~ U(0, 1) per sample, an outcome per sample and one clean outcome per image
(the anchor), and runs :func:`vcrbench.estimation.estimate` as ``evaluate`` does: samples grouped
by image, the clean outcomes resampled with their image.

- design A, few images × many samples (the embedded default run: 10 images × 24 samples);
- design B, one sample per image (the paper's 50,000 images, here 2,000 to keep it affordable).

Prints, per design and bootstrap setting, the share of simulated sets whose interval holds R
(± its Monte-Carlo standard error), the mean interval width and the seconds per estimate.

    python benchmarks/bench_coverage.py [--sims 300] [--n-boot 200] [--design A B]
        [--penalty reselect fixed] [--small-sample t none] [--ungrouped]
        [--spline pspline quantile]

Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy.special import expit

from vcrbench import estimation as E
from vcrbench.settings import EstimationSettings

MU, TAU, SLOPE = 2.0, 1.5, 6.0
DESIGNS = {
    # name: (images, samples per image, estimation.min_count)
    "A": (10, 24, 3),
    "B": (2000, 1, 20),
}


def true_area(grid: np.ndarray) -> float:
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    a = MU + TAU * nodes
    s = (weights[:, None] * expit(a[:, None] - SLOPE * grid[None, :])).sum(0) / weights.sum()
    return float(np.trapezoid(s, grid))


def simulate(design: str, rng: np.random.Generator):
    n_images, per_image, _ = DESIGNS[design]
    a = rng.normal(MU, TAU, n_images)
    image = np.repeat(np.arange(n_images), per_image)
    dv = rng.uniform(0.0, 1.0, image.size)
    y = rng.uniform(size=image.size) < expit(a[image] - SLOPE * dv)
    clean = (rng.uniform(size=n_images) < expit(a)).astype(np.float64)
    return dv, y.astype(np.float64), image, clean


def run(
    design: str, sims: int, n_boot: int, penalty: str, grouped: bool, small: str, spline: str
) -> None:
    r_true = true_area(E.default_grid(EstimationSettings().grid_size))
    min_count = DESIGNS[design][2]
    hits, widths = [], []
    start = time.perf_counter()
    for sim in range(sims):
        dv, y, image, clean = simulate(design, np.random.default_rng(10_000 + sim))
        est = E.estimate(
            dv,
            y,
            clean,
            EstimationSettings(
                min_count=min_count,
                n_boot=n_boot,
                bootstrap_penalty=penalty,
                small_sample=small,
                spline=spline,
            ),
            groups=image if grouped else None,
            anchor_groups=np.arange(len(clean)) if grouped else None,
            seed=sim,
        )
        hits.append(est.area_lo <= r_true <= est.area_hi)
        widths.append(est.area_hi - est.area_lo)
    seconds = (time.perf_counter() - start) / sims
    cover = float(np.mean(hits))
    se = float(np.sqrt(cover * (1 - cover) / sims))
    n_images, per_image, _ = DESIGNS[design]
    unit = "image" if grouped else "sample"
    print(
        f"{design}  {n_images:5d} x {per_image:2d}  {spline:8s}  {unit:6s}  {penalty:8s}  {small:5s}  "
        f"{cover:.3f} ± {se:.3f}     {np.mean(widths):.4f}      {seconds:6.2f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sims", type=int, default=300)
    parser.add_argument("--n-boot", type=int, default=200)
    parser.add_argument("--design", nargs="+", default=list(DESIGNS), choices=list(DESIGNS))
    parser.add_argument(
        "--penalty", nargs="+", default=["reselect"], choices=list(E.BOOTSTRAP_PENALTIES)
    )
    parser.add_argument("--small-sample", nargs="+", default=["t"], choices=list(E.SMALL_SAMPLE))
    parser.add_argument(
        "--ungrouped", action="store_true", help="also resample samples, not images"
    )
    parser.add_argument("--spline", nargs="+", default=["pspline"], choices=list(E.SPLINES))
    args = parser.parse_args()
    print(
        f"coverage of the nominal 95% interval of R̂: {args.sims} simulated sets, "
        f"n_boot={args.n_boot}, a_i ~ N({MU}, {TAU}²), p_i(v) = σ(a_i − {SLOPE} v), "
        f"{os.cpu_count()} CPUs"
    )
    print(
        "design images x per  spline    unit    penalty   small  coverage         mean width  "
        f"s/estimate (load average {os.getloadavg()[0]:.1f})"
    )
    for design in args.design:
        for spline in args.spline:
            for penalty in args.penalty:
                for small in args.small_sample:
                    for grouped in (True, False) if args.ungrouped else (True,):
                        run(design, args.sims, args.n_boot, penalty, grouped, small, spline)


if __name__ == "__main__":
    main()
