"""How often the band-overlap test calls two samples of one curve similar, and its power.

Two human-like curves (logistic drop at Δv = 0.7, and at 0.7 + shift) are sampled independently
(n trials each at uniform Δv, 500 clean trials for the anchor), estimated with 200 bootstrap
replicates, and compared with :func:`vcrbench.estimation.similarity.similar` at the paper's 83% level with
pointwise and with simultaneous (sup-t) bands.

    python benchmarks/bench_similarity.py [--n 3000] [--trials 30]

Prints figures only.
"""

from __future__ import annotations

import argparse

import numpy as np

from vcrbench import estimation as E
from vcrbench.estimation import similarity as S
from vcrbench.settings import EstimationSettings


def human_like(turn):
    return lambda v: 0.05 + 0.9 / (1 + np.exp((v - turn) / 0.05))


def sample_estimate(f, seed, n):
    rng = np.random.default_rng(seed)
    dv = rng.uniform(0, 1, n)
    y = rng.uniform(size=n) < f(dv)
    clean = rng.uniform(size=500) < f(np.zeros(1))[0]
    return E.estimate(dv, y, clean, EstimationSettings(n_boot=200), seed=seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--trials", type=int, default=30)
    args = parser.parse_args()
    for shift in (0.0, 0.05, 0.1):
        judged = {"pointwise": [], "simultaneous": []}
        for t in range(args.trials):
            a = sample_estimate(human_like(0.7), 100 + 2 * t, args.n)
            b = sample_estimate(human_like(0.7 + shift), 101 + 2 * t, args.n)
            for band, out in judged.items():
                out.append(S.similar(a, b, band=band, level=S.SIMILARITY_LEVEL)["similar"])
        shares = ", ".join(f"{band} {np.mean(out):.2f}" for band, out in judged.items())
        print(f"n={args.n} shift={shift}: share judged similar ({args.trials} pairs): {shares}")


if __name__ == "__main__":
    main()
