"""Tests of vcrbench.estimation.similarity: the 83% band-overlap test, the screening binomial test,
classes."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy.stats import binom

from vcrbench import estimation as E
from vcrbench.estimation import similarity as S
from vcrbench.settings import EstimationSettings

GRID = E.default_grid(EstimationSettings().grid_size)


def human_like(turn):
    return lambda v: 0.05 + 0.9 / (1 + np.exp((v - turn) / 0.05))


@functools.cache
def _estimate(turn, seed, n=3000):
    """A human-like estimate turning at ``turn``; the anchor is given as clean outcomes, so the
    band has width at 0. Made once per pytest process and shared by the tests (each reads it)."""
    f = human_like(turn)
    rng = np.random.default_rng(seed)
    dv = rng.uniform(0, 1, n)
    y = rng.uniform(size=n) < f(dv)
    clean = rng.uniform(size=500) < f(np.zeros(1))[0]
    return E.estimate(dv, y, clean, EstimationSettings(n_boot=100), seed=seed)


def test_bands_overlap_pointwise():
    lo_a, hi_a = np.array([0.5, 0.5, 0.5]), np.array([0.6, 0.6, 0.6])
    lo_b, hi_b = np.array([0.6, 0.65, 0.3]), np.array([0.7, 0.7, 0.49])
    np.testing.assert_array_equal(S.bands_overlap(lo_a, hi_a, lo_b, hi_b), [True, False, False])
    with pytest.raises(ValueError, match="same shape"):
        S.bands_overlap(lo_a, hi_a, lo_b[:2], hi_b)
    with pytest.raises(ValueError, match="NaN"):
        S.bands_overlap(lo_a, hi_a, np.full(3, np.nan), hi_b)


def test_same_curve_is_similar_and_shifted_curve_is_not():
    a = _estimate(0.7, seed=1)
    b = _estimate(0.7, seed=2)
    c = _estimate(0.45, seed=3)
    same = S.similar(a, b, band="simultaneous", level=S.SIMILARITY_LEVEL)
    assert same["similar"] and same["overlap_fraction"] == 1.0
    assert same["max_gap"] == 0.0 and same["first_gap_v"] is None
    other = S.similar(a, c, band="simultaneous", level=S.SIMILARITY_LEVEL)
    assert not other["similar"]
    assert other["overlap_fraction"] < 0.8 and other["max_gap"] > 0.1
    assert 0.3 < other["first_gap_v"] < 0.7
    # A wider band (higher level) overlaps at least where a narrower one does.
    wider = S.similar(a, c, level=0.99, band="simultaneous")
    assert wider["overlap_fraction"] >= other["overlap_fraction"]


def test_pointwise_bands_are_the_narrower_option():
    a = _estimate(0.7, seed=1)
    lo_p, hi_p = a.band(0.83, "pointwise")
    lo_s, hi_s = a.band(0.83, "simultaneous")
    assert np.mean((lo_s <= lo_p + 1e-7) & (hi_p <= hi_s + 1e-7)) > 0.95
    # A sup-t band holds (at least) the level's share of whole replicate curves.
    inside = np.all((a.replicates >= lo_s - 1e-6) & (a.replicates <= hi_s + 1e-6), axis=1)
    assert inside.mean() >= 0.83 - 1 / a.n_boot
    c = _estimate(0.45, seed=3)
    pointwise = S.similar(a, c, level=S.SIMILARITY_LEVEL, band=S.SIMILARITY_BAND)  # the paper's
    assert pointwise == S.similar(a, c, band="pointwise", level=S.SIMILARITY_LEVEL)
    assert (
        pointwise["overlap_fraction"]
        <= S.similar(a, c, band="simultaneous", level=S.SIMILARITY_LEVEL)["overlap_fraction"]
    )
    with pytest.raises(ValueError, match="band kind"):
        a.band(0.83, "bonferroni")


def test_similar_accepts_raw_bands():
    lo, hi = np.zeros(5), np.ones(5)
    out = S.similar((lo, hi), (lo + 2, hi + 2), level=S.SIMILARITY_LEVEL, band=S.SIMILARITY_BAND)
    assert not out["similar"] and out["first_gap_v"] == 0 and out["max_gap"] == pytest.approx(1.0)
    without = E.estimate(
        np.linspace(0, 1, 2000), np.ones(2000), 1.0, EstimationSettings(n_boot=0), seed=0
    )
    with pytest.raises(ValueError, match="no band"):
        S.similar(without, without, level=S.SIMILARITY_LEVEL, band=S.SIMILARITY_BAND)


def test_screening_test_against_chance():
    chance_level = S.screening_test(52, 100, alpha=0.05)
    assert not chance_level["distinguishable"]
    assert chance_level["p_value"] == pytest.approx(binom.sf(51, 100, 0.5))
    assert chance_level["ci_lo"] < 0.5 < chance_level["ci_hi"]
    told_apart = S.screening_test(70, 100, alpha=0.05)
    assert told_apart["distinguishable"] and told_apart["p_value"] < 1e-4
    assert told_apart["accuracy"] == 0.7
    # Other chance levels (e.g. an odd-one-out task with three choices).
    assert S.screening_test(40, 100, chance=1 / 3, alpha=0.05)["p_value"] == pytest.approx(
        binom.sf(39, 100, 1 / 3)
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [((5, 0), "n_trials"), ((11, 10), "n_correct"), ((-1, 10), "n_correct")],
)
def test_screening_test_rejects_bad_counts(args, message):
    with pytest.raises(ValueError, match=message):
        S.screening_test(*args, alpha=0.05)
    with pytest.raises(ValueError, match="chance"):
        S.screening_test(5, 10, chance=1.0, alpha=0.05)


def _band(center, half=0.05):
    c = np.full(11, center, dtype=float)
    return c - half, c + half


def test_similarity_classes_are_cliques():
    items = {
        "gaussian_noise": _band(0.50),
        "shot_noise": _band(0.52),
        "impulse_noise": _band(0.55),
        "blur": _band(0.80),
        "median_blur": _band(0.83),
        "frost": _band(0.20),
    }
    assert S.classes_found(items, level=S.SIMILARITY_LEVEL, band=S.SIMILARITY_BAND) == [
        ["gaussian_noise", "impulse_noise", "shot_noise"],
        ["blur", "median_blur"],
        ["frost"],
    ]


def test_similarity_is_not_transitive_so_chains_split():
    # x ~ y and y ~ z but x !~ z: one pair forms a class, the third stands alone.
    items = {"x": _band(0.40), "y": _band(0.48), "z": _band(0.56)}
    assert S.classes_found(items, level=S.SIMILARITY_LEVEL, band=S.SIMILARITY_BAND) == [
        ["x", "y"],
        ["z"],
    ]


def test_similarity_classes_from_estimates():
    items = {
        "a": _estimate(0.7, seed=4),
        "b": _estimate(0.7, seed=5),
        "c": _estimate(0.4, seed=6),
    }
    assert S.classes_found(items, level=S.SIMILARITY_LEVEL, band=S.SIMILARITY_BAND) == [
        ["a", "b"],
        ["c"],
    ]
