"""Numbers a reviewer trusts: the resampling unit, the penalty's uncertainty, paired differences
with Holm, human support, scenario labels with their bootstrap share."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from vcrbench import estimation
from vcrbench.errors import EvaluationError
from vcrbench.estimation import metrics
from vcrbench.evaluation import differences, evaluate
from vcrbench.files import io
from vcrbench.humans import curves as hcurves
from vcrbench.humans.trial_schema import HumanDataError
from vcrbench.settings import EstimationSettings


def repeated_images(seed=0, n_images=10, per_image=24):
    """Few images x many samples, images of very different difficulty (the default run's shape)."""
    rng = np.random.default_rng(seed)
    a = rng.normal(1.5, 2.5, n_images)
    image = np.repeat(np.arange(n_images), per_image)
    dv = rng.uniform(0, 1, image.size)
    y = (rng.uniform(size=image.size) < expit(a[image] - 5 * dv)).astype(float)
    clean = (rng.uniform(size=n_images) < expit(a)).astype(float)
    return dv, y, image, clean


# --------------------------------------------------------------------------- resampling unit


def test_grouping_by_image_widens_intervals_when_images_repeat():
    widths = {True: [], False: []}
    for seed in range(4):
        dv, y, image, clean = repeated_images(seed)
        for grouped in (True, False):
            est = estimation.estimate(
                dv, y, clean, EstimationSettings(min_count=3, n_boot=60, bootstrap_penalty="fixed"),
                groups=image if grouped else None,
                anchor_groups=np.arange(10) if grouped else None, seed=seed,
            )  # fmt: skip
            widths[grouped].append(est.area_hi - est.area_lo)
    # Samples of one image are correlated: resampling samples pretends there are 240 units.
    assert np.mean(widths[True]) > 1.3 * np.mean(widths[False])


@pytest.mark.parametrize("penalty", ["fixed", "reselect"])
def test_grouping_changes_nothing_when_each_image_appears_once(penalty):
    rng = np.random.default_rng(3)
    dv = rng.uniform(0, 1, 400)
    y = (rng.uniform(size=400) < 0.9 - 0.7 * dv).astype(float)
    clean = (rng.uniform(size=400) < 0.9).astype(float)
    settings = EstimationSettings(n_boot=20, bootstrap_penalty=penalty, min_count=5)
    plain = estimation.estimate(dv, y, 0.9, settings, seed=5)
    grouped = estimation.estimate(dv, y, 0.9, settings, seed=5, groups=np.arange(400))
    np.testing.assert_array_equal(plain.replicates, grouped.replicates)
    assert (plain.area_lo, plain.area_hi) == (grouped.area_lo, grouped.area_hi)
    assert clean.size == 400


def test_reselecting_the_penalty_per_replicate():
    dv, y, image, clean = repeated_images(1)
    common = dict(groups=image, anchor_groups=np.arange(10), seed=2)
    settings = EstimationSettings(min_count=3, n_boot=40)
    fixed_settings = replace(settings, bootstrap_penalty="fixed")
    fixed = estimation.estimate(dv, y, clean, fixed_settings, **common)
    again = estimation.estimate(dv, y, clean, settings, **common)
    assert again.area == fixed.area and again.lam == fixed.lam  # the point fit is unchanged
    assert not np.array_equal(again.replicates, fixed.replicates)
    assert np.all(np.diff(again.replicates, axis=1) <= 1e-6)  # replicates stay monotone
    same = estimation.estimate(dv, y, clean, settings, **common)
    np.testing.assert_array_equal(same.replicates, again.replicates)  # seeded
    # a fixed penalty is not re-chosen
    a = estimation.estimate(dv, y, clean, replace(settings, lam=1e-2), **common)
    b = estimation.estimate(dv, y, clean, replace(fixed_settings, lam=1e-2), **common)
    np.testing.assert_array_equal(a.replicates, b.replicates)
    with pytest.raises(ValueError, match="bootstrap_penalty"):
        EstimationSettings(bootstrap_penalty="sometimes")


def test_replicate_penalty_search_window():
    from vcrbench.estimation.bootstrap import RESELECT_STEPS, _candidates

    grid = estimation.LAMBDA_GRID
    mid = _candidates(grid[10])
    assert mid == grid[10 - RESELECT_STEPS : 11 + RESELECT_STEPS]
    assert _candidates(grid[0])[0] == grid[0] and len(_candidates(grid[0])) == RESELECT_STEPS + 1
    assert _candidates(grid[-1])[-1] == grid[-1]


# --------------------------------------------------------------------------- support and labels


def test_metrics_on_a_support_known_answer():
    grid = np.linspace(0, 1, 1001)
    s_h, s_m = 1 - grid, np.full_like(grid, 0.5)
    full = metrics.human_aware(s_h, s_m, grid)
    assert full["HMRI"] == pytest.approx(0.75, abs=1e-6)  # A_h = 1/2, A_{h>m} = 1/8
    assert full == metrics.human_aware(s_h, s_m, grid, support=(0.0, 1.0))
    upper = metrics.human_aware(s_h, s_m, grid, support=(0.5, 1.0))
    assert upper["A_h"] == pytest.approx(0.125, abs=1e-9)
    assert upper["HMRI"] == pytest.approx(1.0)  # humans never above the model there
    assert upper["MRSI"] == pytest.approx(0.5, abs=1e-6)  # (1/8) / (1/4)
    with pytest.raises(ValueError, match="support"):
        metrics.human_aware(s_h, s_m, grid, support=(0.6, 0.4))


def _estimate(values, reps):
    grid = estimation.default_grid(EstimationSettings().grid_size)
    return estimation.Estimate(
        bins=pd.DataFrame(), grid=grid, values=values, lo=values, hi=values, level=0.95,
        area=float(np.trapezoid(values, grid)), area_lo=0.0, area_hi=1.0,
        replicates=reps.astype(np.float32), anchor0=float(values[0]), anchor1=None, lam=1.0,
        min_count=1, weighting="uniform", n=10, n_missing=0, n_groups=None, seed=0,
    )  # fmt: skip


def test_compare_restricted_to_support_equals_full_on_0_1_and_labels_need_95_percent():
    grid = estimation.default_grid(EstimationSettings().grid_size)
    rng = np.random.default_rng(0)
    h = 0.9 - 0.5 * grid
    m = 0.8 - 0.5 * grid
    human = _estimate(h, np.clip(h + rng.normal(0, 0.01, (100, 1)), 0, 1))
    model = _estimate(m, np.clip(m + rng.normal(0, 0.2, (100, 1)), 0, 1))
    full = metrics.compare(human, model, level=0.95, scenario_level=0.95)
    same = metrics.compare(human, model, support=(0.0, 1.0), level=0.95, scenario_level=0.95)
    assert {k: v for k, v in full.items() if k != "replicates"} == {
        k: v for k, v in same.items() if k != "replicates"
    }
    assert full["scenario"] == metrics.SCENARIO_HUMANS_BETTER
    # the model's replicates cross the human curve in many draws: the label is not supported
    assert full["scenario_support"] < 0.95
    assert full["scenario_label"] == metrics.SCENARIO_UNDETERMINED
    sure = metrics.compare(
        human, _estimate(m, np.tile(m, (100, 1))), level=0.95, scenario_level=0.95
    )
    assert sure["scenario_support"] == 1.0 and sure["scenario_label"] == full["scenario"]
    assert len(full["replicates"]["HMRI"]) == 100
    assert metrics.scenario_label("mixed", float("nan"), 0.95) == metrics.SCENARIO_UNDETERMINED


def test_human_support_rule():
    trials = pd.DataFrame(
        {
            "corruption": ["noise"] * 4,
            "condition": ["0.1", "0.1", "0.6", "0.6"],
            "dv": [np.nan] * 4,
        }
    )
    conditions = pd.DataFrame(
        {
            "corruption": ["noise"] * 200,
            "condition": ["0.1"] * 100 + ["0.6"] * 100,
            "dv": np.r_[np.linspace(0.3, 0.5, 100), np.linspace(0.7, 0.95, 100)],
        }
    )
    lo, hi, rule = hcurves.dv_support(trials, conditions, from_zero=False)
    assert lo == pytest.approx(np.quantile(np.linspace(0.3, 0.5, 100), 0.05))
    assert hi == pytest.approx(np.quantile(np.linspace(0.7, 0.95, 100), 0.95))
    assert "q05" in rule
    lo0, hi0, rule0 = hcurves.dv_support(trials, conditions, from_zero=True)
    assert (lo0, hi0) == (0.0, hi) and "Δv = 0" in rule0
    own = pd.DataFrame({"corruption": ["x"] * 3, "condition": ["a"] * 3, "dv": [0.2, 0.4, 0.6]})
    lo, hi, _ = hcurves.dv_support(own, None, from_zero=False)
    assert lo == pytest.approx(0.22) and hi == pytest.approx(0.58)
    with pytest.raises(HumanDataError, match="conditions"):
        hcurves.dv_support(trials, None, from_zero=False)


# --------------------------------------------------------------------------- paired differences


def _replicates(model, values, point, n_units=20, seed=7, metric="R_a"):
    return differences.replicate_rows(
        model, "noise", "imagenet1k", metric, point, values, n=100, n_units=n_units, seed=seed,
        level=0.95,
    )  # fmt: skip


def test_a_model_against_itself_differs_by_zero_with_a_zero_width_interval():
    reps = np.random.default_rng(0).normal(0.5, 0.05, 200)
    table = differences.differences(
        pd.concat([_replicates("a", reps, 0.5), _replicates("b", reps, 0.5)])
    )
    row = table.iloc[0]
    assert (row["diff"], row["diff_lo"], row["diff_hi"]) == (0.0, 0.0, 0.0)
    assert row["p_value"] == 1.0 and row["indistinguishable"]


def test_paired_difference_sees_what_separate_intervals_miss():
    rng = np.random.default_rng(1)
    shared = rng.normal(0, 0.05, 400)  # the test images' common effect on both models
    a = 0.60 + shared + rng.normal(0, 0.003, 400)
    b = 0.58 + shared + rng.normal(0, 0.003, 400)
    # each model alone: intervals overlap widely
    assert np.quantile(a, 0.025) < np.quantile(b, 0.975)
    table = differences.differences(
        pd.concat([_replicates("a", a, 0.60), _replicates("b", b, 0.58)])
    )
    row = table.iloc[0]
    assert row["diff"] == pytest.approx(0.02)
    assert row["diff_lo"] > 0 and not row["indistinguishable"]
    assert row["p_value"] == pytest.approx(1 / 401)


def test_holm_known_answer_and_family():
    np.testing.assert_allclose(
        differences.holm([0.01, 0.04, 0.03, np.nan]), [0.03, 0.06, 0.06, np.nan]
    )
    rng = np.random.default_rng(2)
    frames = [_replicates(m, rng.normal(0.5, 0.05, 100), 0.5) for m in ("a", "b", "c")]
    table = differences.differences(pd.concat(frames))
    assert len(table) == 3  # a-b, a-c, b-c in one family
    assert (table["p_holm"] >= table["p_value"]).all()


def test_fine_tuned_against_base_and_pairing_checks():
    reps = np.random.default_rng(3).normal(0.5, 0.05, 50)
    frames = pd.concat([_replicates("base", reps, 0.5), _replicates("base-ft", reps + 0.1, 0.6)])
    table = differences.differences(frames, relations={"base-ft": "base"})
    row = table.iloc[0]
    assert (row["model_a"], row["model_b"], row["relation"]) == (
        "base-ft",
        "base",
        "fine-tuned vs base",
    )
    assert row["diff"] == pytest.approx(0.1)
    few = pd.concat(
        [_replicates("a", reps, 0.5, n_units=3), _replicates("b", reps, 0.5, n_units=3)]
    )
    assert np.isnan(differences.differences(few)["p_value"].iloc[0])  # too few images
    unpaired = pd.concat([_replicates("a", reps, 0.5, seed=1), _replicates("b", reps, 0.5, seed=2)])
    with pytest.raises(EvaluationError, match="not paired"):
        differences.differences(unpaired)


def test_evaluate_writes_paired_replicates_and_differences(tmp_path):
    from tests.unit.test_evaluate import SETTINGS, synthetic_run

    paths, clean = synthetic_run(tmp_path, n=800)
    for model in ("m1", "m2"):
        evaluate.evaluate(
            paths, clean, tmp_path / model, model=model, corruption="gaussian_noise",
            settings={**SETTINGS, "n_boot": 20}, seed=0, label_spaces=["dataset"],
            scenario_level=0.95, short_label_space="status",
        )  # fmt: skip
    reps = [tmp_path / m / evaluate.REPLICATES_FILE for m in ("m1", "m2")]
    first = io.read_parquet(reps[0])
    units = first.groupby("metric")["n_units"].first().to_dict()
    assert units == {"R_a": 3, "R_p": 4}  # images: 3 of the 4 are labelled
    table = differences.model_differences(reps, tmp_path / "diff.csv")
    # the same predictions under two names: identical replicates, so exactly zero differences
    assert (table["diff"] == 0).all() and (table["diff_lo"] == 0).all()
    assert list(pd.read_csv(tmp_path / "diff.csv").columns) == differences.DIFFERENCE_COLUMNS
    metrics_row = io.read_parquet(tmp_path / "m1" / "metrics.parquet").iloc[0]
    assert metrics_row["n_images"] == 4


def test_full_signal_anchor_is_data_at_zero():
    from vcrbench.humans import stages
    from vcrbench.humans.geirhos import reader
    from vcrbench.plan.humans import reference_of

    full = reader.full_signal_trials("humans")
    assert len(full) == 1920 and set(full["condition"]) == {"cr"}
    assert full["participant"].nunique() == 3
    trials = pd.DataFrame({"participant": ["p1"] * 3, "dv": [0.4, 0.5, 0.6]})
    trials["clean_response"] = hcurves.trial_schema.NOT_RECORDED
    a0, groups, how = hcurves.accuracy_anchor(trials, "auto", full)
    assert how == hcurves.FULL_SIGNAL_ANCHOR and how in hcurves.ANCHORS_AT_ZERO
    assert a0.mean() == pytest.approx(0.884896, abs=1e-6)  # Geirhos' colour condition
    assert all(g.startswith("full-signal:") for g in groups)  # resampled as their own units
    with pytest.raises(HumanDataError, match="full-signal"):
        hcurves.accuracy_anchor(trials, "full-signal", None)
    # without data at Δv = 0, auto falls back to the least-manipulated condition (and the support
    # then leaves [0, lo] out); a geirhos2018 reference always has its lab's full signal
    mine = reference_of("m", {"kind": "trials", "path": "x", "corruption": "blur"})
    assert stages.full_signal_trials(mine) is None
    noise = reference_of("n", {"kind": "geirhos2018", "experiment": "noise"})
    assert len(stages.full_signal_trials(noise)) == 1920


def test_small_sample_factor_and_widening():
    from scipy.stats import t

    from vcrbench.estimation.bootstrap import small_sample_factor, widen

    assert small_sample_factor(10, 0.95) == pytest.approx(
        np.sqrt(10 / 9) * t.ppf(0.975, 9) / 1.959964
    )
    assert small_sample_factor(10, 0.95) == pytest.approx(1.2166, abs=1e-4)
    assert 1.0 < small_sample_factor(2000, 0.95) < 1.001
    assert small_sample_factor(1, 0.95) == 1.0
    assert small_sample_factor(10, 0.83) < small_sample_factor(10, 0.95)
    grid = np.linspace(0, 1, 11)
    center = 0.9 - 0.5 * grid
    reps = np.stack([center + 0.05, center - 0.05]).astype(np.float32)
    wide = widen(reps, center, 1.5)
    np.testing.assert_allclose(wide, np.stack([center + 0.075, center - 0.075]), atol=1e-6)
    assert wide.dtype == np.float32 and widen(reps, center, 1.0) is reps
    clipped = widen(np.stack([np.ones(11)]).astype(np.float32), center, 3.0)
    assert clipped.max() <= 1.0 and np.all(np.diff(clipped, axis=1) <= 0)


def test_estimate_widens_only_with_few_units():
    dv, y, image, clean = repeated_images(2)
    common = dict(groups=image, anchor_groups=np.arange(10), seed=1)
    settings = EstimationSettings(min_count=3, n_boot=50, bootstrap_penalty="fixed")
    plain = estimation.estimate(dv, y, clean, replace(settings, small_sample="none"), **common)
    wide = estimation.estimate(dv, y, clean, settings, **common)
    ratio = (wide.area_hi - wide.area_lo) / (plain.area_hi - plain.area_lo)
    assert ratio == pytest.approx(1.2166, abs=0.03)  # 10 images
    assert wide.area == plain.area
    with pytest.raises(ValueError, match="small_sample"):
        EstimationSettings(small_sample="z")


def test_reselection_with_units_that_hold_only_clean_outcomes():
    # observers of a full-signal anchor hold no samples: a replicate may draw only them
    rng = np.random.default_rng(4)
    dv = rng.uniform(0.3, 1, 60)
    y = (rng.uniform(size=60) < 0.8 - 0.5 * dv).astype(float)
    groups = np.repeat(["p1", "p2"], 30)
    anchor = np.ones(40)
    anchor_groups = np.repeat(["full-signal:a", "full-signal:b"], 20)
    est = estimation.estimate(
        dv,
        y,
        anchor,
        EstimationSettings(min_count=1, n_boot=60),
        groups=groups,
        anchor_groups=anchor_groups,
        seed=0,
    )
    assert est.replicates.shape == (60, len(est.grid))


def test_similarity_classes_found_beside_the_classes_used():
    from vcrbench.figures.build import similarity_classes

    table = pd.DataFrame(
        {
            "property": ["accuracy"] * 3,
            "reference_a": ["noise", "noise", "blur"],
            "reference_b": ["blur", "contrast", "contrast"],
            "similar": [True, False, False],
        }
    )
    info = {
        "noise": {"corruption": "uniform_noise", "similarity_class": "noise"},
        "blur": {"corruption": "geirhos_lowpass", "similarity_class": "blur"},
        "contrast": {"corruption": "geirhos_contrast", "similarity_class": "contrast"},
    }
    out = similarity_classes(table, info).set_index("reference")
    assert out.loc["noise", "class_found"] == out.loc["blur", "class_found"] == 1
    assert out.loc["contrast", "class_found"] == 2 and out.loc["noise", "members"] == "blur noise"
    assert (
        out.loc["blur", "class_used"] == "blur"
    )  # the data say noise ~ blur; the registry does not


def test_model_consistency_figure(tmp_path):
    from vcrbench.figures import build

    rows = []
    for corruption in ("gaussian_noise", "frost"):
        for b in range(5):
            rows.append(
                {"corruption": corruption, "label_space": "imagenet1k", "model_a": "a",
                 "model_b": "b", "bin": b, "v_lo": b / 39, "v_hi": (b + 1) / 39, "n": 3 + b,
                 "kappa": 0.2 * b - 0.3}
            )  # fmt: skip
    path = tmp_path / "k.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    out = build.plot_model_consistency(path, [tmp_path / "k.png"])
    assert out[0].stat().st_size > 0
