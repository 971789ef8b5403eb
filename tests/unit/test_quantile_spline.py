"""Tests of the quantile smoothing spline (Koenker, Ng & Portnoy 1994) of vcrbench.estimation and
of the fits' shared edge cases."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from vcrbench import estimation as E
from vcrbench.estimation import quantile, spline
from vcrbench.settings import EstimationSettings

GRID = E.default_grid(EstimationSettings().grid_size)
KNOTS = np.linspace(0.0, 1.0, 40)


def logistic(v):
    return 0.05 + 0.85 / (1 + np.exp((v - 0.6) / 0.07))


def bins_as_samples(x, rate, n=100):
    """``n`` samples per point x with ``round(rate n)`` of them correct."""
    correct = np.round(np.asarray(rate) * n).astype(int)
    dv = np.repeat(x, n)
    y = np.concatenate([np.r_[np.ones(k), np.zeros(n - k)] for k in correct])
    return dv, y


def assert_valid(values, anchor0):
    assert np.all(np.diff(values) <= 0.0)
    assert values.min() >= 0.0 and values.max() <= anchor0
    assert values[0] == anchor0


def test_linear_basis_values_are_the_coefficients():
    basis = spline._basis(39, 1001, 1)
    assert basis.degree == 1 and basis.n_basis == 40
    np.testing.assert_allclose(basis.design(KNOTS), np.eye(40), atol=1e-12)


def fit_rates(x, rate, lam, name="quantile", anchor0=0.9):
    """Curve values of a fit to exact rates at x (100 samples each)."""
    basis = spline._basis(39, 1001, spline.SPLINES[name])
    count = np.full(len(x), 100.0)
    coef = spline._fit_bins(basis, x, count, rate * count, lam, anchor0, None, spline=name)
    return spline._curve_values(basis, coef)


def test_monotone_line_is_reproduced_at_every_penalty():
    x = (KNOTS[:-1] + KNOTS[1:]) / 2
    for lam in (1e-6, 1e-2, 10.0):
        values = fit_rates(x, 0.9 - 0.8 * x, lam)
        np.testing.assert_allclose(values, 0.9 - 0.8 * GRID, atol=1e-9)


def test_heavy_penalty_gives_a_straight_line():
    dv, y = bins_as_samples(KNOTS[1:-1], logistic(KNOTS[1:-1]))
    curve = E.fit_curve(
        dv, y, 0.9, EstimationSettings(lam=1e3, min_count=1, spline="quantile"), seed=0
    )
    np.testing.assert_allclose(np.diff(curve.coef, 2), 0.0, atol=1e-9)
    assert curve.coef[-1] < 0.9


def test_light_penalty_interpolates_monotone_rates_at_the_knots():
    x = KNOTS[1:]
    rate = np.round(logistic(x), 2)
    dv, y = bins_as_samples(x, rate)
    curve = E.fit_curve(
        dv, y, 0.9, EstimationSettings(lam=1e-6, min_count=1, spline="quantile"), seed=0
    )
    np.testing.assert_allclose(curve(x), rate, atol=1e-9)


def test_median_fit_ignores_an_outlying_bin_least_squares_does_not():
    x = (KNOTS[:-1] + KNOTS[1:]) / 2
    rate = 0.9 - 0.8 * x
    rate_out = rate.copy()
    rate_out[10] = 0.0  # one bin far below the line
    fits = {}
    for name in ("quantile", "pspline"):
        before, after = fit_rates(x, rate, 10.0, name), fit_rates(x, rate_out, 10.0, name)
        fits[name] = np.abs(after - before).max()
    assert fits["quantile"] < 1e-9
    assert fits["pspline"] > 1e-3


def test_quantile_spline_recovers_a_known_curve_and_chooses_its_penalty_by_sic():
    rng = np.random.default_rng(3)
    dv = rng.uniform(0, 1, 10_000)
    y = rng.uniform(size=dv.size) < logistic(dv)
    curve = E.fit_curve(dv, y, logistic(0.0), EstimationSettings(spline="quantile"), seed=0)
    assert curve.spline == "quantile" and curve.degree == 1
    assert len(curve.cv_scores) == len(quantile.QUANTILE_LAMBDA_GRID)
    i = quantile.QUANTILE_LAMBDA_GRID.index(curve.lam)
    assert curve.cv_scores[i] == curve.cv_scores.min()
    assert abs(curve.area() - np.trapezoid(logistic(GRID), GRID)) < 0.015
    assert np.abs(curve.values - logistic(GRID)).max() < 0.1


def test_sic_counts_interpolated_bins():
    Bx = np.eye(4)
    rate = np.array([0.9, 0.5, 0.4, 0.1])
    weight = np.full(4, 0.25)
    exact = quantile.sic(Bx, rate, weight, rate)
    off = quantile.sic(Bx, rate, weight, rate + np.r_[0.0, 0.0, 0.0, 0.04])
    assert exact == pytest.approx(np.log(1e-12) + 4 * np.log(4) / 8)
    assert off == pytest.approx(np.log(0.01) + 3 * np.log(4) / 8)


def test_right_end_anchor_is_met():
    rng = np.random.default_rng(0)
    dv = rng.uniform(0, 1, 2000)
    y = rng.uniform(size=dv.size) < logistic(dv)
    curve = E.fit_curve(dv, y, 0.9, EstimationSettings(anchor1=0.2, spline="quantile"), seed=0)
    assert curve.values[-1] == pytest.approx(0.2)
    assert_valid(curve.values, 0.9)


def test_estimate_with_the_quantile_spline_is_seeded_and_bootstrapped():
    rng = np.random.default_rng(1)
    dv = rng.uniform(0, 1, 600)
    y = rng.uniform(size=dv.size) < logistic(dv)
    groups = np.repeat(np.arange(60), 10)
    settings = EstimationSettings(n_boot=20, spline="quantile", min_count=5)
    kwargs = dict(seed=4, groups=groups)
    a, b = E.estimate(dv, y, 0.9, settings, **kwargs), E.estimate(dv, y, 0.9, settings, **kwargs)
    np.testing.assert_array_equal(a.replicates, b.replicates)
    assert a.area == b.area
    assert a.area_lo < a.area < a.area_hi
    for rep in a.replicates:
        assert_valid(rep.astype(np.float64), rep[0])
    p = E.estimate(dv, y, 0.9, replace(settings, spline="pspline"), **kwargs)
    assert p.area != a.area


def test_the_settings_take_the_spline_and_bad_names_are_refused():
    assert EstimationSettings.of_config({"spline": "quantile"}).spline == "quantile"
    with pytest.raises(ValueError, match="spline must be one of"):
        E.estimate([0.1, 0.2], [1, 0], 0.9, EstimationSettings(spline="cobs"), seed=0)
    with pytest.raises(ValueError, match="spline must be one of"):
        E.fit_curve([0.1, 0.2], [1, 0], 0.9, EstimationSettings(spline="cobs"), seed=0)


@pytest.mark.parametrize("fit", ["pspline", "quantile"])
@pytest.mark.parametrize("outcomes", [[0.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
def test_anchor_at_the_smallest_normal_float_does_not_fail(fit, outcomes):
    # Found by Hypothesis: nnls hit its iteration limit ("Maximum number of iterations") on a band
    # [0, 2.2e-308] of feasible curves.
    anchor = 2.2250738585072014e-308
    est = E.estimate(
        [0.0, 0.0], outcomes, anchor, EstimationSettings(min_count=1, n_boot=3, spline=fit), seed=0
    )
    assert est.values[0] == anchor
    assert np.all(est.values <= anchor) and np.all(est.values >= 0.0)


def test_the_default_fit_is_unchanged_by_the_option():
    rng = np.random.default_rng(2)
    dv = rng.uniform(0, 1, 500)
    y = rng.uniform(size=dv.size) < logistic(dv)
    default = E.estimate(dv, y, 0.9, EstimationSettings(n_boot=5), seed=1)
    explicit = E.estimate(dv, y, 0.9, EstimationSettings(n_boot=5, spline="pspline"), seed=1)
    pd.testing.assert_frame_equal(default.curve_frame(), explicit.curve_frame())
    np.testing.assert_array_equal(default.replicates, explicit.replicates)
