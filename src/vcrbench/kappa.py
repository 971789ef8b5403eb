"""Error consistency: Cohen's κ of two observers' trial-by-trial correctness.

Geirhos, Meding & Wichmann, *Beyond accuracy: quantifying trial-by-trial behaviour of CNNs and
humans by measuring error consistency*, NeurIPS 2020. One formula, used for humans against
Geirhos et al.'s networks (:mod:`vcrbench.humans.geirhos.error_consistency`) and for every pair of
models on the workflow's own test sets (:mod:`vcrbench.evaluation.consistency`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def error_consistency(correct_a: Sequence[bool], correct_b: Sequence[bool]) -> dict:
    """Cohen's κ of two observers' trial-by-trial correctness (Geirhos, Meding & Wichmann 2020).

    ``c_obs`` is the fraction of trials on which both are right or both wrong, ``c_exp = p_a p_b +
    (1 - p_a)(1 - p_b)`` what independent observers with accuracies ``p_a``, ``p_b`` would reach,
    ``κ = (c_obs - c_exp) / (1 - c_exp)``. Where ``c_obs = 1`` (in particular where ``c_exp = 1``:
    both always right, or both always wrong) κ is 1, as in the authors' code. Returns
    ``{"kappa", "c_obs", "c_exp", "n", "p_a", "p_b"}``.
    """
    a = np.asarray(correct_a)
    b = np.asarray(correct_b)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(
            f"correct_a and correct_b must be 1-d and of equal length ({a.shape}, {b.shape})"
        )
    if a.size == 0:
        raise ValueError("error consistency of zero trials is undefined")
    for name, x in (("correct_a", a), ("correct_b", b)):
        if x.dtype != bool and not np.isin(x, (0, 1)).all():
            raise ValueError(f"{name} must be booleans (or 0/1)")
    a = a.astype(bool)
    b = b.astype(bool)
    p_a, p_b = float(a.mean()), float(b.mean())
    c_exp = p_a * p_b + (1.0 - p_a) * (1.0 - p_b)
    c_obs = float((a == b).mean())
    kappa = 1.0 if c_obs == 1.0 else (c_obs - c_exp) / (1.0 - c_exp)
    return {
        "kappa": kappa,
        "c_obs": c_obs,
        "c_exp": c_exp,
        "n": int(a.size),
        "p_a": p_a,
        "p_b": p_b,
    }


def pair_mean_kappa(correct_a: Sequence[bool], correct_b: Sequence[bool], pairs: Sequence) -> dict:
    """The published convention: κ of each pair of observers, then their unweighted mean.

    Geirhos, Meding & Wichmann (2020) and bethgelab/model-vs-human
    (``modelvshuman/plotting/analyses.py``, ``ErrorConsistency.get_result_df``) compute κ per
    human–network pair, on the trials that pair shares in one condition, and average over the
    humans. ``pairs`` labels each trial with its pair (e.g. the human); :func:`error_consistency`
    of each pair's trials, in the order the labels sort. Returns ``{"kappa_pair_mean",
    "n_pairs", "n_min", "n_max"}``: the mean, how many pairs, and the fewest and most trials a pair
    shares.
    """
    a = np.asarray(correct_a)
    b = np.asarray(correct_b)
    labels = np.asarray(pairs)
    if labels.shape != a.shape:
        raise ValueError(f"pairs must label every trial ({labels.shape} labels, {a.shape} trials)")
    results = [error_consistency(a[labels == p], b[labels == p]) for p in np.unique(labels)]
    if not results:
        raise ValueError("error consistency of zero trials is undefined")
    counts = [r["n"] for r in results]
    return {
        "kappa_pair_mean": float(np.mean([r["kappa"] for r in results])),
        "n_pairs": len(results),
        "n_min": min(counts),
        "n_max": max(counts),
    }
