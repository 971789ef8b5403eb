"""Tests of vcrbench.estimation: Alg. 1 bins, the monotone anchored spline, areas, bootstrap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.interpolate import BSpline
from scipy.optimize import LinearConstraint, minimize

from vcrbench import estimation as E
from vcrbench.estimation import spline
from vcrbench.files import io
from vcrbench.settings import EstimationSettings

GRID = E.default_grid(EstimationSettings().grid_size)


def line(v):
    return 0.9 - 0.8 * v


def logistic(v):
    return 0.05 + 0.85 / (1 + np.exp((v - 0.6) / 0.07))


def step(v):
    return np.where(v < 0.5, 0.9, 0.1)


def draw(f, n, seed, low=0.0, high=1.0):
    rng = np.random.default_rng(seed)
    dv = rng.uniform(low, high, n)
    return dv, rng.uniform(size=n) < f(dv)


def samples_of(table):
    """A bins table as samples: each bin's correct then wrong samples at the bin's mean Δv (its
    centre where it has none), so that a fit of the samples is the fit of the table."""
    count = table["count"].to_numpy(np.int64)
    correct = table["correct"].to_numpy(np.int64)
    pos = table["v_mean"] if "v_mean" in table.columns else table["v_center"]
    pos = pos.fillna(table["v_center"]) if "v_center" in table.columns else pos.fillna(0.0)
    reps = np.column_stack([correct, count - correct]).ravel()
    dv = np.repeat(np.repeat(pos.to_numpy(np.float64), 2), reps)
    y = np.repeat(np.tile([1.0, 0.0], len(table)), reps)
    return dv, y


def assert_monotone_in_unit(values):
    values = np.asarray(values)
    assert np.all(np.diff(values) <= 0.0), "curve increases somewhere"
    assert values.min() >= 0.0 and values.max() <= 1.0


# ------------------------------------------------------------------------------------------ bins


def test_bin_index_follows_alg1():
    dv = np.array([0.0, 0.5 / 39, 1 / 39 + 1e-12, 0.5, 38.5 / 39, 0.999999, 1.0])
    np.testing.assert_array_equal(E.bin_index(dv, 40), [0, 0, 1, 19, 38, 38, 39])
    # Only v = 1.0 reaches the last bin.
    assert E.bin_index(np.nextafter(1.0, 0.0), 40) == 38
    np.testing.assert_array_equal(E.bin_index([0.0, 0.5, 1.0], 3), [0, 1, 2])
    assert E.bin_index(np.zeros(0), 40).dtype == np.int64
    with pytest.raises(ValueError, match="NaN"):
        E.bin_index([0.2, np.nan], 40)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        E.bin_index(1.5, 40)


@pytest.mark.parametrize(
    ("dv", "message"),
    [([0.1, np.nan], "NaN"), ([-0.01], r"\[0, 1\]"), ([1.0001], r"\[0, 1\]"), ([[0.1]], "one-dim")],
)
def test_bad_dv_is_rejected(dv, message):
    with pytest.raises(ValueError, match=message):
        E.bin_counts(dv, np.ones(np.shape(dv)))


def test_bin_counts_table():
    dv = np.array([0.0, 0.01, 0.02, 0.5, 0.5, 1.0, 0.3])
    correct = np.array([1, 0, 1, 1, 1, 0, np.nan])  # the NaN is a missing outcome: dropped
    table = E.bin_counts(dv, correct, EstimationSettings(min_count=2))
    assert list(table.columns) == [
        "bin", "v_lo", "v_hi", "v_center", "v_mean", "count", "correct", "rate", "used",
    ]  # fmt: skip
    assert len(table) == 40
    assert table["count"].sum() == 6
    row0 = table.loc[0]
    assert (row0["count"], row0["correct"]) == (3, 2)
    assert row0["rate"] == pytest.approx(2 / 3)
    assert row0["v_mean"] == pytest.approx(0.01)
    assert (row0["v_lo"], row0["v_hi"]) == (0.0, pytest.approx(1 / 39))
    last = table.loc[39]
    assert (last["v_lo"], last["v_hi"], last["v_center"], last["count"]) == (1.0, 1.0, 1.0, 1)
    assert table.loc[19, "count"] == 2 and table.loc[19, "rate"] == 1.0
    assert table["used"].tolist() == [c >= 2 for c in table["count"]]
    assert np.isnan(table.loc[5, "rate"]) and np.isnan(table.loc[5, "v_mean"])


def test_bin_counts_rejects_bad_outcomes():
    with pytest.raises(ValueError, match="correct must hold 0/1"):
        E.bin_counts([0.1, 0.2], [0, 2])
    with pytest.raises(ValueError, match="dv has 2 values but correct has 1"):
        E.bin_counts([0.1, 0.2], [1])


def test_bin_counts_accepts_pandas_nullable_booleans():
    correct = pd.Series([True, None, False], dtype="boolean")
    table = E.bin_counts([0.1, 0.1, 0.1], correct)
    assert table["count"].sum() == 2 and table["correct"].sum() == 1


# ---------------------------------------------------------------------------------------- solver


def _objective(basis, x, count, correct, lam):
    Bx = basis.design(x)
    w = count / count.sum()
    p = correct / count

    def obj(c):
        return (
            np.sum(w * (p - Bx @ c) ** 2)
            + lam * np.sum((basis.D2 @ c) ** 2)
            + spline._RIDGE * np.sum((basis.D1 @ c) ** 2)
        )

    return obj


@pytest.mark.parametrize("seed", range(4))
def test_constrained_fit_is_the_exact_optimum(seed):
    """The NNLS-based solution matches a general-purpose QP solve (SLSQP) of the same problem."""
    rng = np.random.default_rng(seed)
    basis = spline._basis(39, 1001)
    m = int(rng.integers(3, 40))
    x = np.sort(rng.uniform(0, 1, m))
    count = rng.integers(5, 300, m).astype(float)
    correct = np.round(rng.uniform(0, 1, m) * count)
    lam = float(10 ** rng.uniform(-6, 1))
    a0 = float(rng.uniform(0.4, 1.0))
    a1 = None if seed % 2 else float(rng.uniform(0, a0))
    coef = spline._fit_bins(basis, x, count, correct, lam, a0, a1, spline="pspline")
    obj = _objective(basis, x, count, correct, lam)
    n = basis.n_basis
    eq = np.zeros((1 if a1 is None else 2, n))
    eq[0, 0] = 1
    rhs = [a0] if a1 is None else [a0, a1]
    if a1 is not None:
        eq[1, -1] = 1
    cons = [
        LinearConstraint(basis.monotone, 0, np.inf),
        LinearConstraint(eq, rhs, rhs),
    ]
    start = np.linspace(a0, 0.0 if a1 is None else a1, n)
    ref = minimize(
        obj, start, constraints=cons, method="SLSQP", options={"ftol": 1e-15, "maxiter": 2000}
    )
    assert coef[0] == a0
    if a1 is not None:
        assert coef[-1] == a1
    assert np.all(np.diff(coef) <= 0) and coef[-1] >= 0
    assert obj(coef) <= ref.fun * (1 + 1e-6) + 1e-12


def test_penalty_vanishes_on_straight_lines():
    """Heavy smoothing of exactly linear rates gives that line, ends included."""
    v = E.bin_edges(40)[2][:-1]
    table = pd.DataFrame({"bin": np.arange(40), "count": np.r_[np.full(39, 10_000), 0]})
    table["correct"] = np.r_[np.round(line(v) * 10_000), 0].astype(int)
    table["v_mean"] = np.r_[v, np.nan]
    curve = E.fit_curve(*samples_of(table), 0.9, EstimationSettings(lam=100.0), seed=0)
    np.testing.assert_allclose(curve.values, line(GRID), atol=2e-4)


# ------------------------------------------------------------------------------------ known answers

# Tolerances for n = 10,000 uniform samples. The area's sampling s.d. is about 0.0045, so 0.015
# is above 3 s.d.; benchmarks/bench_estimation.py measures the error distribution over 100 seeds
# (docs/estimation.md). Sup-norm errors are for the whole curve (the step: away from the jump).
KNOWN = [
    ("line", line, 0.015, 0.08),
    ("logistic", logistic, 0.015, 0.08),
    ("step", step, 0.015, 0.15),
]


@pytest.mark.parametrize(("name", "f", "area_tol", "sup_tol"), KNOWN)
def test_known_curves_are_recovered(name, f, area_tol, sup_tol):
    dv, y = draw(f, 10_000, seed=7)
    anchor = float(f(np.zeros(1))[0])
    est = E.estimate(dv, y, anchor, EstimationSettings(n_boot=50), seed=3)
    true = f(GRID)
    r_true = np.trapezoid(true, GRID)
    assert abs(est.area - r_true) <= area_tol
    mask = np.abs(GRID - 0.5) > 0.05 if name == "step" else np.ones_like(GRID, dtype=bool)
    assert np.abs(est.values - true)[mask].max() <= sup_tol
    assert est.values[0] == anchor
    assert_monotone_in_unit(est.values)
    assert est.area_lo <= est.area <= est.area_hi


def test_curve_area_matches_exact_spline_integral():
    dv, y = draw(logistic, 3000, seed=1)
    curve = E.fit_curve(dv, y, float(logistic(0.0)), seed=0)
    exact = BSpline(curve.knots, curve.coef, curve.degree).integrate(0, 1)
    assert curve.area() == pytest.approx(exact, abs=1e-6)
    assert curve(np.array([0.0]))[0] == pytest.approx(curve.values[0])
    assert curve(np.array([0.3]))[0] == pytest.approx(curve.values[300])


def test_fit_curve_agrees_with_estimate_at_the_same_penalty():
    dv, y = draw(logistic, 4000, seed=2)
    est = E.estimate(dv, y, 0.9, EstimationSettings(n_boot=0), seed=0)
    curve = E.fit_curve(dv, y, 0.9, EstimationSettings(lam=est.lam), seed=0)
    np.testing.assert_allclose(curve.values, est.values, atol=1e-10)


def test_cross_validation_adapts_the_penalty():
    """A straight line is best fitted smooth, a step rough: CV picks accordingly."""
    point = EstimationSettings(n_boot=0)
    lam_line = E.estimate(*draw(line, 10_000, seed=4), 0.9, point, seed=0).lam
    lam_step = E.estimate(*draw(step, 10_000, seed=4), 0.9, point, seed=0).lam
    assert lam_line >= 1.0
    assert lam_step <= 1e-3


# ----------------------------------------------------------------------------------- degenerate


def test_single_populated_bin_is_bridged_from_the_anchor():
    rng = np.random.default_rng(0)
    dv = rng.uniform(0.515, 0.535, 200)  # all in bin 20 = [20/39, 21/39)
    y = rng.uniform(size=200) < 0.3
    est = E.estimate(dv, y, 0.8, EstimationSettings(n_boot=20), seed=0)
    assert est.bins["used"].sum() == 1
    assert est.values[0] == 0.8
    assert_monotone_in_unit(est.values)
    assert est.values[525] == pytest.approx(y.mean(), abs=0.05)


def test_all_correct_gives_a_flat_curve_at_the_anchor():
    dv = np.random.default_rng(1).uniform(0, 1, 2000)
    est = E.estimate(dv, np.ones(2000, bool), 1.0, EstimationSettings(n_boot=20), seed=0)
    np.testing.assert_allclose(est.values, 1.0, atol=1e-9)
    assert est.area == pytest.approx(1.0, abs=1e-9)
    # Data above the anchor cannot lift the curve over it.
    est = E.estimate(dv, np.ones(2000, bool), 0.7, EstimationSettings(n_boot=0), seed=0)
    np.testing.assert_allclose(est.values, 0.7, atol=1e-9)


def test_all_wrong_drops_to_zero_right_after_the_anchor():
    dv = np.random.default_rng(2).uniform(0, 1, 2000)
    est = E.estimate(dv, np.zeros(2000, bool), 0.9, EstimationSettings(n_boot=20), seed=0)
    assert est.values[0] == 0.9
    assert est.area < 0.05
    assert est.values[100:].max() < 0.01


def test_bins_only_at_high_dv():
    dv, y = draw(logistic, 5000, seed=3, low=0.75, high=1.0)
    anchor = float(logistic(0.0))
    est = E.estimate(dv, y, anchor, EstimationSettings(n_boot=20), seed=0)
    assert est.bins.loc[est.bins["used"], "bin"].min() >= 29
    assert est.values[0] == anchor
    assert_monotone_in_unit(est.values)
    high = GRID >= 0.8
    assert np.abs(est.values[high] - logistic(GRID[high])).max() < 0.08


def test_fixed_right_end():
    dv, y = draw(logistic, 3000, seed=5)
    est = E.estimate(dv, y, 0.9, EstimationSettings(anchor1=0.2, n_boot=10), seed=0)
    assert est.values[-1] == pytest.approx(0.2)
    assert_monotone_in_unit(est.values)
    with pytest.raises(ValueError, match="anchor1"):
        E.estimate(dv, y, 0.5, EstimationSettings(anchor1=0.6), seed=0)


# --------------------------------------------------------------------------------------- errors


def test_empty_and_all_missing_input_raise():
    with pytest.raises(ValueError, match="empty"):
        E.estimate([], [], 0.9, seed=0)
    with pytest.raises(ValueError, match="all 3 values of 'correct' are missing"):
        E.estimate([0.1, 0.2, 0.3], [np.nan] * 3, 0.9, seed=0)
    with pytest.raises(ValueError, match="empty"):
        E.fit_curve([], [], 0.9, seed=0)


def test_fit_curve_checks_its_samples():
    dv, y = draw(line, 500, seed=0)
    with pytest.raises(ValueError, match="dv has 500 values but correct has 499"):
        E.fit_curve(dv, y[1:], 0.9, seed=0)
    with pytest.raises(ValueError, match="correct must hold 0/1"):
        E.fit_curve(dv, np.where(y, 2, 0), 0.9, seed=0)
    with pytest.raises(ValueError, match="anchor1"):
        E.fit_curve(dv, y, 0.5, EstimationSettings(anchor1=0.6), seed=0)
    # Sample order does not matter (at a fixed penalty; CV folds depend on the order).
    order = np.random.default_rng(0).permutation(len(dv))
    np.testing.assert_allclose(
        E.fit_curve(dv[order], y[order], 0.9, EstimationSettings(lam=1.0), seed=0).values,
        E.fit_curve(dv, y, 0.9, EstimationSettings(lam=1.0), seed=0).values,
        atol=1e-12,
    )


def test_too_few_samples_per_bin_names_min_count():
    with pytest.raises(ValueError, match="min_count=20"):
        E.estimate([0.1, 0.5, 0.9], [1, 0, 1], 0.9, seed=0)
    est = E.estimate(
        [0.1, 0.5, 0.9], [1, 0, 1], 0.9, EstimationSettings(min_count=1, n_boot=5), seed=0
    )
    assert_monotone_in_unit(est.values)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"anchor0": 1.2}, "anchor0"),
        ({"anchor0": 0.9, "level": 1.0}, "level"),
        ({"anchor0": 0.9, "weighting": "cosine"}, "unknown weighting"),
        ({"anchor0": 0.9, "weighting": "beta:0.5,1"}, ">= 1"),
        ({"anchor0": 0.9, "n_boot": -1}, "n_boot"),
        ({"anchor0": 0.9, "lam": -1.0}, "lam"),
        ({"anchor0": 0.9, "groups": [1, 2]}, "groups has 2 entries"),
        ({"anchor0": 0.9, "groups": [1] * 99 + [None]}, "missing labels"),
        ({"anchor0": [np.nan, np.nan]}, "clean outcomes are missing"),
        ({"anchor0": 0.9, "anchor_groups": [1]}, "anchor_groups"),
    ],
)
def test_bad_arguments_raise_clear_errors(kwargs, message):
    dv, y = draw(line, 100, seed=0)
    kwargs = {"min_count": 1, "n_boot": 2} | kwargs
    anchor = kwargs.pop("anchor0")
    samples = {k: kwargs.pop(k) for k in ("groups", "anchor_groups") if k in kwargs}
    with pytest.raises(ValueError, match=message):
        E.estimate(dv, y, anchor, EstimationSettings(**kwargs), seed=0, **samples)


# ------------------------------------------------------------------------------------ bootstrap


def test_same_seed_same_result_and_other_seed_differs():
    dv, y = draw(logistic, 3000, seed=6)
    a = E.estimate(dv, y, 0.9, EstimationSettings(n_boot=30), seed=11)
    b = E.estimate(dv, y, 0.9, EstimationSettings(n_boot=30), seed=11)
    c = E.estimate(dv, y, 0.9, EstimationSettings(n_boot=30), seed=12)
    assert a.replicates.dtype == np.float32 and a.replicates.shape == (30, len(GRID))
    assert a.replicates.tobytes() == b.replicates.tobytes()
    assert a.values.tobytes() == b.values.tobytes() and a.lam == b.lam
    assert not np.array_equal(a.replicates, c.replicates)


def test_replicates_are_valid_curves_and_band_brackets():
    dv, y = draw(logistic, 3000, seed=8)
    est = E.estimate(dv, y, 0.9, EstimationSettings(n_boot=40), seed=0)
    for rep in est.replicates:
        assert_monotone_in_unit(rep)
        assert rep[0] == np.float32(0.9)
    assert np.all(est.lo <= est.hi)
    inside = (est.lo - 1e-6 <= est.values) & (est.values <= est.hi + 1e-6)
    assert inside.mean() > 0.95
    lo83, hi83 = est.band(0.83)
    assert np.all(lo83 >= est.lo - 1e-7) and np.all(hi83 <= est.hi + 1e-7)
    assert (est.area_lo, est.area_hi) == pytest.approx(est.area_interval(0.95))


def test_bootstrap_function_matches_estimate():
    dv, y = draw(line, 2000, seed=9)
    reps = E.bootstrap(
        dv, y, 0.9, EstimationSettings(n_boot=10, bootstrap_penalty="fixed"), lam=1.0, seed=4
    )
    again = E.bootstrap(
        dv, y, 0.9, EstimationSettings(n_boot=10, bootstrap_penalty="fixed"), lam=1.0, seed=4
    )
    assert reps.shape == (10, len(GRID)) and reps.tobytes() == again.tobytes()
    assert all(np.all(np.diff(r) <= 0) for r in reps)


def test_cluster_bootstrap_widens_intervals_for_correlated_groups():
    """Participants with their own ability: resampling participants shows the extra variance."""
    rng = np.random.default_rng(10)
    n_groups, per = 30, 100
    offset = rng.normal(0, 0.15, n_groups)
    groups = np.repeat(np.arange(n_groups), per)
    dv = rng.uniform(0, 1, n_groups * per)
    p = np.clip(line(dv) + offset[groups], 0, 1)
    y = rng.uniform(size=len(dv)) < p
    iid = E.estimate(dv, y, 0.9, EstimationSettings(n_boot=100, lam=1.0), seed=0)
    clustered = E.estimate(
        dv, y, 0.9, EstimationSettings(n_boot=100, lam=1.0), seed=0, groups=groups
    )
    assert clustered.n_groups == n_groups
    width_iid = iid.area_hi - iid.area_lo
    width_cluster = clustered.area_hi - clustered.area_lo
    assert width_cluster > 1.5 * width_iid


def test_anchor_outcomes_are_resampled():
    dv, y = draw(line, 2000, seed=12)
    clean = np.random.default_rng(0).uniform(size=500) < 0.9
    est = E.estimate(dv, y, clean, EstimationSettings(n_boot=30), seed=1)
    assert est.anchor0 == pytest.approx(clean.mean())
    assert est.values[0] == pytest.approx(clean.mean())
    starts = est.replicates[:, 0]
    assert len(np.unique(starts)) > 5
    assert abs(float(np.mean(starts)) - clean.mean()) < 0.02
    # Clean outcomes of the same participants are resampled jointly with their trials.
    groups = np.arange(2000) % 20
    est_g = E.estimate(
        dv,
        y,
        clean,
        EstimationSettings(n_boot=10),
        groups=groups,
        anchor_groups=np.arange(500) % 20,
        seed=1,
    )
    assert est_g.n_groups == 20 and len(np.unique(est_g.replicates[:, 0])) > 1


# ----------------------------------------------------------------------------------- weighting


def test_weightings():
    grid = GRID
    for spec in (None, "uniform", "beta:2,1", "beta:1,3", lambda v: 1 + v, np.ones(len(grid))):
        w = E.weights_on_grid(spec, grid)
        assert np.trapezoid(w, grid) == pytest.approx(1.0)
        # A constant curve has that constant as its weighted area.
        assert E.area(np.full(len(grid), 0.37), spec) == pytest.approx(0.37)
    np.testing.assert_allclose(
        E.weights_on_grid("beta:2,1", grid), E.weights_on_grid(lambda v: 2 * v, grid)
    )
    decreasing = line(grid)
    assert E.area(decreasing, "beta:2,1") < E.area(decreasing) < E.area(decreasing, "beta:1,2")
    assert E.area(decreasing) == pytest.approx(0.5)
    assert E.area(decreasing, "beta:2,1") == pytest.approx(0.9 - 0.8 * 2 / 3)
    with pytest.raises(ValueError, match="non-negative"):
        E.weights_on_grid(lambda v: v - 0.5, grid)
    with pytest.raises(ValueError, match="integrates to 0"):
        E.weights_on_grid(np.zeros(len(grid)), grid)
    with pytest.raises(ValueError, match="one weight per grid point"):
        E.weights_on_grid(np.ones(3), grid)


def test_estimate_area_uses_weighting():
    dv, y = draw(line, 3000, seed=13)
    plain = E.estimate(dv, y, 0.9, EstimationSettings(n_boot=20), seed=0)
    heavy = E.estimate(dv, y, 0.9, EstimationSettings(n_boot=20, weighting="beta:2,1"), seed=0)
    np.testing.assert_array_equal(plain.values, heavy.values)
    assert heavy.weighting == "beta:2,1"
    assert heavy.area == pytest.approx(E.area(plain.values, "beta:2,1"))
    assert heavy.area < plain.area
    assert heavy.area_interval(0.95, "beta:2,1") == pytest.approx((heavy.area_lo, heavy.area_hi))


# ------------------------------------------------------------------------------------ round trip


def test_estimate_round_trips_through_parquet(tmp_path):
    dv, y = draw(logistic, 2000, seed=14)
    groups = np.arange(2000) % 17
    est = E.estimate(
        dv, y, 0.85, EstimationSettings(n_boot=25, weighting="beta:2,1"), seed=5, groups=groups
    )
    frames = est.to_frames()
    paths = {}
    for name, frame in frames.items():
        paths[name] = io.write_parquet(frame, tmp_path / f"{name}.parquet", metadata=est.metadata())
    back = E.Estimate.from_frames(**{k: io.read_parquet(p) for k, p in paths.items()})
    for field in ("grid", "values", "lo", "hi"):
        np.testing.assert_array_equal(getattr(back, field), getattr(est, field))
    assert back.replicates.dtype == np.float32
    assert back.replicates.tobytes() == est.replicates.tobytes()
    pd.testing.assert_frame_equal(back.bins, est.bins)
    for field in ("level", "area", "area_lo", "area_hi", "anchor0", "anchor1", "lam", "min_count",
                  "weighting", "n", "n_missing", "n_groups", "seed"):  # fmt: skip
        assert getattr(back, field) == getattr(est, field), field
    # Same inputs and seed give byte-identical files.
    again = E.estimate(
        dv, y, 0.85, EstimationSettings(n_boot=25, weighting="beta:2,1"), seed=5, groups=groups
    )
    io.write_parquet(
        again.replicates_frame(), tmp_path / "again.parquet", metadata=again.metadata()
    )
    assert (tmp_path / "again.parquet").read_bytes() == paths["replicates"].read_bytes()


def test_from_frames_without_replicates_and_with_key_columns():
    dv, y = draw(line, 1000, seed=15)
    est = E.estimate(dv, y, 0.9, EstimationSettings(n_boot=0), seed=0)
    frames = {k: v.assign(model="m", property="a") for k, v in est.to_frames().items()}
    back = E.Estimate.from_frames(frames["bins"], frames["curve"], frames["summary"])
    assert back.n_boot == 0 and np.isnan(back.area_lo)
    np.testing.assert_array_equal(back.values, est.values)
    with pytest.raises(ValueError, match="exactly one row"):
        E.Estimate.from_frames(frames["bins"], frames["curve"], pd.concat([frames["summary"]] * 2))


# ------------------------------------------------------------------------------------ properties


@settings(max_examples=30, deadline=None)
@given(
    dv=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=300),
    data=st.data(),
    anchor=st.floats(0.0, 1.0),
)
def test_any_input_gives_a_monotone_curve_in_unit_interval(dv, data, anchor):
    correct = data.draw(st.lists(st.booleans(), min_size=len(dv), max_size=len(dv)))
    est = E.estimate(dv, correct, anchor, EstimationSettings(min_count=1, n_boot=3), seed=0)
    assert_monotone_in_unit(est.values)
    assert est.values[0] == anchor
    assert 0.0 <= est.area <= 1.0
    for rep in est.replicates:
        assert_monotone_in_unit(rep)


@pytest.mark.parametrize("fit", list(E.SPLINES))
@settings(max_examples=30, deadline=None)
@given(
    counts=st.lists(st.integers(0, 60), min_size=40, max_size=40),
    data=st.data(),
    anchor=st.floats(0.0, 1.0),
    log_lam=st.floats(-8, 2),
)
def test_any_bins_table_gives_a_valid_fit(fit, counts, data, anchor, log_lam):
    counts = np.array(counts)
    if counts.sum() == 0:
        counts[data.draw(st.integers(0, 39))] = 1
    correct = np.array([data.draw(st.integers(0, int(c))) for c in counts])
    table = pd.DataFrame({"bin": np.arange(40), "count": counts, "correct": correct})
    table["v_center"] = E.bin_edges(40)[2]
    settings = EstimationSettings(min_count=1, lam=10.0**log_lam, spline=fit)
    curve = E.fit_curve(*samples_of(table), anchor, settings, seed=0)
    assert_monotone_in_unit(curve.values)
    assert curve.values[0] == anchor
    assert 0.0 <= curve.area() <= 1.0
