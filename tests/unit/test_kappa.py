"""Cohen's κ of trial-by-trial correctness (vcrbench.kappa): hand-computed values, degenerate
cases, independent observers."""

from __future__ import annotations

import numpy as np
import pytest

from vcrbench.kappa import error_consistency, pair_mean_kappa


def test_error_consistency_hand_computed():
    a = [1, 1, 1, 0, 0, 0, 1, 0]
    b = [1, 1, 0, 0, 1, 0, 1, 1]
    # p_a = 1/2, p_b = 5/8: c_exp = 1/2; agreement on 5 of 8: c_obs = 5/8; κ = (5/8-1/2)/(1/2)
    r = error_consistency(a, b)
    assert r == {"kappa": 0.25, "c_obs": 0.625, "c_exp": 0.5, "n": 8, "p_a": 0.5, "p_b": 0.625}
    assert error_consistency(a, [1 - x for x in a])["kappa"] == -1.0
    assert error_consistency(b, a)["kappa"] == 0.25


def test_error_consistency_identical_and_degenerate():
    rng = np.random.default_rng(0)
    for p in (0.1, 0.5, 0.9):
        x = rng.random(500) < p
        r = error_consistency(x, x)
        assert r["kappa"] == 1.0 and r["c_obs"] == 1.0 and r["c_exp"] < 1
    # c_exp = 1 (both always right, or both always wrong): κ defined as 1
    for v in (True, False):
        r = error_consistency([v] * 5, [v] * 5)
        assert r["c_exp"] == 1.0 and r["kappa"] == 1.0
    # one always right, the other always wrong: c_exp = c_obs = 0, κ = 0
    assert error_consistency([True] * 4, [False] * 4)["kappa"] == 0.0
    with pytest.raises(ValueError, match="equal length"):
        error_consistency([True], [True, False])
    with pytest.raises(ValueError, match="zero trials"):
        error_consistency([], [])
    with pytest.raises(ValueError, match="booleans"):
        error_consistency([0.5], [1])


def test_error_consistency_of_independent_observers_is_near_zero():
    rng = np.random.default_rng(1)
    kappas = []
    for pa, pb in ((0.5, 0.5), (0.8, 0.3), (0.95, 0.6)):
        a, b = rng.random(40_000) < pa, rng.random(40_000) < pb
        r = error_consistency(a, b)
        assert r["c_exp"] == pytest.approx(pa * pb + (1 - pa) * (1 - pb), abs=0.01)
        kappas.append(r["kappa"])
    assert np.abs(kappas).max() < 0.02


def test_pair_mean_kappa_hand_computed():
    # three human-network pairs of one condition, sharing 4, 2 and 4 trials:
    # pair x: p = 1/2, 1/2, c_exp = 1/2, agreement on 2 of 4       -> κ = 0
    # pair y: both right twice: c_obs = 1                           -> κ = 1
    # pair z: p = 3/4, 1/2, c_exp = 3/8 + 1/8 = 1/2, c_obs = 3/4    -> κ = 1/2
    a = [1, 1, 0, 0, 1, 1, 1, 0, 1, 1]
    b = [1, 0, 0, 1, 1, 1, 1, 0, 1, 0]
    pairs = ["x"] * 4 + ["y"] * 2 + ["z"] * 4
    r = pair_mean_kappa(a, b, pairs)
    assert r == {"kappa_pair_mean": 0.5, "n_pairs": 3, "n_min": 2, "n_max": 4}
    # pooled over the pairs: p = 7/10, 6/10, c_exp = .42 + .12 = .54, c_obs = 7/10
    pooled = error_consistency(a, b)["kappa"]
    assert pooled == pytest.approx((0.7 - 0.54) / (1 - 0.54))
    # the pair labels' order does not matter; one pair is the pooled κ
    shuffled = pair_mean_kappa(a[::-1], b[::-1], pairs[::-1])
    assert shuffled["kappa_pair_mean"] == r["kappa_pair_mean"]
    assert pair_mean_kappa(a, b, ["h"] * 10)["kappa_pair_mean"] == pooled
    with pytest.raises(ValueError, match="label every trial"):
        pair_mean_kappa(a, b, pairs[:-1])
