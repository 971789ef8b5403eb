"""Tests of vcrbench.estimation.metrics: A_h, A_m, A_{h>m}, A_{m>h}, HMRI, MRSI, scenarios,
compare()."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vcrbench import estimation as E
from vcrbench.estimation import metrics as M
from vcrbench.settings import EstimationSettings

GRID = E.default_grid(EstimationSettings().grid_size)


def test_identical_curves():
    s = 0.9 - 0.5 * GRID**2
    out = M.human_aware(s, s.copy(), GRID)
    assert out["HMRI"] == 1.0 and out["MRSI"] == 0.0
    assert out["A_h_gt_m"] == 0.0 and out["A_m_gt_h"] == 0.0
    assert out["A_h"] == out["A_m"] == pytest.approx(0.9 - 0.5 / 3, abs=1e-6)
    assert out["scenario"] == M.SCENARIO_IDENTICAL


def test_humans_better_everywhere():
    s_h, s_m = 0.9 - 0.5 * GRID, 0.7 - 0.5 * GRID
    out = M.human_aware(s_h, s_m, GRID)
    assert out["A_h"] == pytest.approx(0.65) and out["A_m"] == pytest.approx(0.45)
    assert out["A_h_gt_m"] == pytest.approx(0.2) and out["A_m_gt_h"] == 0.0
    assert out["HMRI"] == pytest.approx(1 - 0.2 / 0.65) and out["HMRI"] < 1
    assert out["MRSI"] == 0.0
    assert out["scenario"] == M.SCENARIO_HUMANS_BETTER


def test_model_better_everywhere():
    s_h, s_m = 0.8 * (1 - GRID), 0.9 * (1 - GRID**2)
    out = M.human_aware(s_h, s_m, GRID)
    assert out["HMRI"] == 1.0
    assert out["MRSI"] == pytest.approx((0.6 - 0.4) / 0.6, abs=1e-5)
    assert out["scenario"] == M.SCENARIO_MODEL_BETTER


def test_mixed_crossing_curves_have_exact_values():
    # Humans 1 - v, model flat at 0.5: they cross at v = 0.5 (a grid point, so the trapezoid
    # rule is exact): A_h = A_m = 0.5, A_{h>m} = A_{m>h} = 0.125.
    s_h, s_m = 1 - GRID, np.full_like(GRID, 0.5)
    out = M.human_aware(s_h, s_m, GRID)
    assert out["A_h_gt_m"] == pytest.approx(0.125, abs=1e-12)
    assert out["A_m_gt_h"] == pytest.approx(0.125, abs=1e-12)
    assert out["HMRI"] == pytest.approx(0.75, abs=1e-12)
    assert out["MRSI"] == pytest.approx(0.25, abs=1e-12)
    assert out["scenario"] == M.SCENARIO_MIXED


def test_zero_areas_have_defined_values_not_nan():
    zero, some = np.zeros_like(GRID), 0.5 * (1 - GRID)
    out = M.human_aware(zero, some, GRID)  # humans never right
    assert out["A_h"] == 0.0 and out["HMRI"] == 1.0
    assert out["MRSI"] == pytest.approx(1.0)  # the only case where MRSI reaches 1
    assert out["scenario"] == M.SCENARIO_MODEL_BETTER
    out = M.human_aware(some, zero, GRID)  # model never right
    assert out["A_m"] == 0.0 and out["MRSI"] == 0.0 and out["HMRI"] == 0.0
    assert out["scenario"] == M.SCENARIO_HUMANS_BETTER
    out = M.human_aware(zero, zero, GRID)
    assert (out["HMRI"], out["MRSI"], out["scenario"]) == (1.0, 0.0, M.SCENARIO_IDENTICAL)


def test_weighting_changes_areas_consistently():
    s_h, s_m = 1 - GRID, np.full_like(GRID, 0.5)
    plain = M.human_aware(s_h, s_m, GRID)
    assert M.human_aware(s_h, s_m, GRID, weighting="uniform") == plain
    heavy = M.human_aware(s_h, s_m, GRID, weighting="beta:2,1")
    # Favouring heavy corruption favours the model, which leads at high Δv.
    assert heavy["MRSI"] > plain["MRSI"] and heavy["HMRI"] > plain["HMRI"]
    assert heavy["A_h"] == pytest.approx(1 / 3, abs=1e-6)


def test_bad_curves_raise():
    with pytest.raises(ValueError, match="equal length"):
        M.human_aware(np.ones(5), np.ones(6))
    with pytest.raises(ValueError, match=r"s_m must lie in \[0, 1\]"):
        M.human_aware(np.ones(5), np.full(5, 1.5))
    with pytest.raises(ValueError, match="non-finite"):
        M.human_aware(np.full(5, np.nan), np.ones(5))
    with pytest.raises(ValueError, match="grid has 3 points"):
        M.human_aware(np.ones(5), np.ones(5), np.linspace(0, 1, 3))


monotone_curve = st.lists(st.floats(0.0, 1.0), min_size=2, max_size=12).map(
    lambda xs: np.interp(GRID, np.linspace(0, 1, len(xs)), np.sort(xs)[::-1])
)


@settings(max_examples=60, deadline=None)
@given(s_h=monotone_curve, s_m=monotone_curve)
# A human curve below float resolution next to a model curve (found by CI): MRSI rounds to 1.0.
@example(s_h=np.interp(GRID, [0, 1], [3.2e-262, 0.0]), s_m=np.interp(GRID, [0, 1], [1.0, 0.0]))
def test_index_ranges_and_identity(s_h, s_m):
    out = M.human_aware(s_h, s_m, GRID)
    assert 0.0 <= out["HMRI"] <= 1.0
    assert 0.0 <= out["MRSI"] <= 1.0
    # MRSI < 1 whenever the curves overlap (∫ min(s_h, s_m) > 0); in floating point only once the
    # overlap is above the rounding of A_m (a human curve of 1e-262 rounds MRSI to 1.0).
    if out["A_m"] - out["A_m_gt_h"] > 1e-12:
        assert out["MRSI"] < 1.0
    # A_h - A_{h>m} = ∫ min(s_h, s_m) = A_m - A_{m>h}, hence A_h HMRI = A_m (1 - MRSI).
    assert out["A_h"] - out["A_h_gt_m"] == pytest.approx(out["A_m"] - out["A_m_gt_h"], abs=1e-12)
    # ... and A_h follows from (A_m, HMRI, MRSI) wherever that overlap is resolved in floats
    # (its relative rounding error is about 1e-16 · A_m / overlap).
    if out["A_m"] - out["A_m_gt_h"] > 1e-6:
        assert M.implied_human_area(out["A_m"], out["HMRI"], out["MRSI"]) == pytest.approx(
            out["A_h"], rel=1e-9
        )
    assert out["scenario"] in M.SCENARIOS


# Table 3 of the VCR paper (retraining): (R̂, HMRI, MRSI) for accuracy then consistency, for
# Standard_R50 before/after and SIN before/after. SIN's "before" MRSI is printed with 2 decimals.
TABLE3 = {
    "Median Blur": [
        ((0.532, 0.635, 0.000), (0.573, 0.673, 0.000)),
        ((0.694, 0.828, 0.003), (0.728, 0.854, 0.001)),
        ((0.522, 0.624, 0.00), (0.605, 0.710, 0.00)),
        ((0.650, 0.774, 0.004), (0.729, 0.852, 0.004)),
    ],
    "Frost": [
        ((0.429, 0.521, 0.011), (0.473, 0.572, 0.012)),
        ((0.575, 0.690, 0.025), (0.678, 0.804, 0.031)),
        ((0.423, 0.512, 0.015), (0.513, 0.618, 0.016)),
        ((0.517, 0.625, 0.016), (0.647, 0.768, 0.031)),
    ],
    "Glass Blur": [
        ((0.468, 0.569, 0.003), (0.502, 0.603, 0.003)),
        ((0.647, 0.770, 0.024), (0.744, 0.866, 0.034)),
        ((0.334, 0.407, 0.000), (0.397, 0.478, 0.000)),
        ((0.572, 0.687, 0.016), (0.684, 0.809, 0.018)),
    ],
}
SIN_BEFORE = 2  # row index whose MRSI has 2 decimals


def _implied_range(r, hmri, mrsi, mrsi_half_step):
    """The interval of A_h consistent with the rounded (R̂, HMRI, MRSI)."""
    h = 0.0005
    lo = M.implied_human_area(r - h, hmri + h, min(mrsi + mrsi_half_step, 1.0))
    hi = M.implied_human_area(r + h, hmri - h, max(mrsi - mrsi_half_step, 0.0))
    return lo, hi


@pytest.mark.parametrize("corruption", sorted(TABLE3))
@pytest.mark.parametrize("prop", [0, 1], ids=["accuracy", "consistency"])
def test_table3_rows_imply_one_human_area(corruption, prop):
    ranges = [
        _implied_range(*row[prop], 0.005 if i == SIN_BEFORE else 0.0005)
        for i, row in enumerate(TABLE3[corruption])
    ]
    lo = max(r[0] for r in ranges)
    hi = min(r[1] for r in ranges)
    assert lo <= hi, f"{corruption}: rows imply different human areas {ranges}"


def test_table3_median_blur_human_areas():
    a = [M.implied_human_area(*row[0]) for row in TABLE3["Median Blur"]]
    p = [M.implied_human_area(*row[1]) for row in TABLE3["Median Blur"]]
    assert np.mean(a) == pytest.approx(0.836, abs=0.002)
    assert np.mean(p) == pytest.approx(0.851, abs=0.002)


def test_table3_corruptions_differ():
    """The consistency check can fail: different corruptions imply different human areas."""
    ranges = [_implied_range(*TABLE3[c][0][0], 0.0005) for c in ("Median Blur", "Frost")]
    assert ranges[0][0] > ranges[1][1]


def test_implied_human_area_needs_positive_hmri():
    with pytest.raises(ValueError, match="hmri"):
        M.implied_human_area(0.5, 0.0, 0.0)


# --------------------------------------------------------------------------------------- compare


def _estimate(f, n, seed, n_boot=40):
    rng = np.random.default_rng(seed)
    dv = rng.uniform(0, 1, n)
    y = rng.uniform(size=n) < f(dv)
    return E.estimate(dv, y, float(f(np.zeros(1))[0]), EstimationSettings(n_boot=n_boot), seed=seed)


def test_compare_point_values_and_paired_intervals():
    human = _estimate(lambda v: 0.95 / (1 + np.exp((v - 0.8) / 0.05)), 4000, 1)
    model = _estimate(lambda v: 0.85 / (1 + np.exp((v - 0.6) / 0.08)), 4000, 2, n_boot=30)
    out = M.compare(human, model, level=0.95, scenario_level=0.95)
    point = M.human_aware(human.values, model.values, human.grid)
    for key in ("A_h", "A_m", "A_h_gt_m", "A_m_gt_h", "HMRI", "MRSI", "scenario"):
        assert out[key] == point[key]
    assert out["R"] == pytest.approx(model.area)
    assert out["n_boot"] == 30 and out["level"] == 0.95
    # The interval bounds are percentiles of the paired replicates.
    hmri = [
        M.human_aware(human.replicates[b].astype(float), model.replicates[b].astype(float))["HMRI"]
        for b in range(30)
    ]
    assert out["HMRI_lo"] == pytest.approx(np.quantile(hmri, 0.025))
    assert out["HMRI_hi"] == pytest.approx(np.quantile(hmri, 0.975))
    assert out["HMRI_lo"] <= out["HMRI"] <= out["HMRI_hi"]
    assert 0.0 <= out["MRSI_lo"] <= out["MRSI_hi"] < 1.0
    assert out["R_lo"] <= out["R"] <= out["R_hi"]
    assert 0.0 <= out["scenario_support"] <= 1.0


def test_compare_without_replicates_and_on_other_grids():
    human = _estimate(lambda v: 0.9 - 0.8 * v, 1000, 3, n_boot=0)
    model = _estimate(lambda v: 0.8 - 0.7 * v, 1000, 4, n_boot=10)
    out = M.compare(human, model, level=0.95, scenario_level=0.95)
    assert out["n_boot"] == 0 and np.isnan(out["HMRI_lo"]) and np.isnan(out["scenario_support"])
    assert out["scenario"] in M.SCENARIOS
    rng = np.random.default_rng(0)
    dv = rng.uniform(0, 1, 1000)
    coarse = E.estimate(
        dv, rng.uniform(size=1000) < 0.5, 0.5, EstimationSettings(n_boot=0, grid_size=101), seed=0
    )
    with pytest.raises(ValueError, match="different grids"):
        M.compare(human, coarse, level=0.95, scenario_level=0.95)


def test_compare_of_an_estimate_with_itself():
    est = _estimate(lambda v: 0.9 - 0.8 * v, 2000, 5, n_boot=20)
    out = M.compare(est, est, level=0.95, scenario_level=0.95)
    assert (out["HMRI"], out["MRSI"], out["scenario"]) == (1.0, 0.0, M.SCENARIO_IDENTICAL)
    assert out["HMRI_lo"] == 1.0 and out["MRSI_hi"] == 0.0 and out["scenario_support"] == 1.0
