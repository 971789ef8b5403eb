"""Human curves through the models' estimator; placement of trials on the Δv axis; files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vcrbench.estimation.storage import read_human_estimate, write_human_estimate
from vcrbench.humans import curves, mapping, stages, trial_schema
from vcrbench.humans.geirhos import reader
from vcrbench.humans.trial_schema import HumanDataError
from vcrbench.settings import EstimationSettings
from vcrbench.vocab import ESTIMATE_TABLES, param_columns_of

SETTINGS = {"n_boot": 8, "min_count": 5}
FIT = curves.HumanFit(SETTINGS, "auto", "draw")


def fake_conditions(trials: pd.DataFrame, n_images: int = 4, draws: int = 2) -> pd.DataFrame:
    """A Δv table shaped like condition_dv's, increasing with the condition's parameter."""
    conds = mapping.conditions_of(trials)
    pcol = param_columns_of(conds)[0]
    top = conds[pcol].max()
    rows = []
    for c in conds.to_dict("records"):
        base = 0.05 + 0.9 * c[pcol] / top
        for i in range(n_images):
            for d in range(draws):
                rows.append(
                    {
                        "corruption": c["corruption"],
                        "condition": c["condition"],
                        "image_id": f"img{i}",
                        "draw": d,
                        "dv": min(1.0, base + 0.01 * i + 0.001 * d),
                    }
                )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def noise():
    return reader.read_geirhos("noise")


@pytest.fixture(scope="module")
def noise_cdv(noise):
    return fake_conditions(noise)


# --------------------------------------------------------------------------- placement


def test_assign_dv_draws_from_the_condition_pool(noise, noise_cdv):
    dv = mapping.assign_dv(noise, noise_cdv, seed=3, placement="draw")
    assert not np.isnan(dv).any()
    for cond, idx in noise.groupby("condition").indices.items():
        pool = set(noise_cdv.loc[noise_cdv["condition"] == cond, "dv"])
        assert set(dv[idx]) <= pool
        assert len(set(dv[idx])) > 1  # trials are spread over the condition's images
    # same seed and replicate: same values; another replicate: other values
    assert np.array_equal(dv, mapping.assign_dv(noise, noise_cdv, seed=3, placement="draw"))
    assert not np.array_equal(
        dv, mapping.assign_dv(noise, noise_cdv, seed=3, replicate=1, placement="draw")
    )
    assert not np.array_equal(dv, mapping.assign_dv(noise, noise_cdv, seed=4, placement="draw"))


def test_assign_dv_median_and_measured(noise, noise_cdv):
    dv = mapping.assign_dv(noise, noise_cdv, seed=0, placement="median")
    for cond, idx in noise.groupby("condition").indices.items():
        assert np.all(dv[idx] == noise_cdv.loc[noise_cdv["condition"] == cond, "dv"].median())
    # a measured Δv is kept
    t = noise.copy()
    t.loc[0, "dv"] = 0.5
    assert mapping.assign_dv(t, noise_cdv, seed=0, placement="draw")[0] == 0.5


def test_assign_dv_unknown_condition(noise, noise_cdv):
    with pytest.raises(HumanDataError, match=r"no Δv measured for condition '0.90'"):
        mapping.assign_dv(
            noise, noise_cdv[noise_cdv["condition"] != "0.90"], seed=0, placement="draw"
        )


def test_conditions_of(noise):
    conds = mapping.conditions_of(noise)
    assert conds["condition"].tolist() == "0.00 0.03 0.05 0.10 0.20 0.35 0.60 0.90".split()
    bad = noise.copy()
    bad.loc[0, "param.width"] = 0.7
    with pytest.raises(HumanDataError, match="differing parameters"):
        mapping.conditions_of(bad)


# --------------------------------------------------------------------------- curves


def test_geirhos_curve_is_estimated_and_deterministic(noise, noise_cdv, tmp_path):
    est = curves.human_estimates(noise, noise_cdv, FIT, 1, name="t")
    assert set(est.curves) == {"accuracy"}  # no clean answers: no consistency
    lo, hi, rule = est.support["accuracy"]
    assert 0 < lo < hi <= 1 and "q05" in rule  # zero-condition anchor: no data at Δv = 0
    acc = est.curves["accuracy"]
    assert "zero condition '0.00'" in est.anchor
    assert acc.anchor0 == pytest.approx(0.805)  # Geirhos' accuracy at w = 0
    assert np.all(np.diff(acc.values) <= 1e-12)
    assert acc.replicates.shape == (8, len(acc.grid))
    assert acc.area_lo <= acc.area <= acc.area_hi
    # the curve passes near each condition's accuracy at its Δv
    table = reader.condition_accuracy(noise).set_index("condition")["accuracy"]
    med = noise_cdv.groupby("condition")["dv"].median()
    for cond in ("0.20", "0.35"):
        assert abs(np.interp(med[cond], acc.grid, acc.values) - table[cond]) < 0.06
    again = curves.human_estimates(noise, noise_cdv, FIT, 1, name="t")
    assert np.array_equal(acc.replicates, again.curves["accuracy"].replicates)
    p1 = write_human_estimate(est, tmp_path / "a")
    p2 = write_human_estimate(again, tmp_path / "b")
    for t in ESTIMATE_TABLES:
        assert p1[t].read_bytes() == p2[t].read_bytes()
    back = read_human_estimate(tmp_path / "a")
    assert back.anchor == est.anchor and back.support == est.support
    np.testing.assert_allclose(back.curves["accuracy"].values, acc.values)
    np.testing.assert_array_equal(back.curves["accuracy"].replicates, acc.replicates)


def test_placement_uncertainty_widens_the_band(noise, noise_cdv):
    # Spread the conditions' Δv widely: with per-replicate redraws the band must be wider than
    # with every trial at its condition's median (participants resampled in both).
    wide = noise_cdv.assign(
        dv=np.clip(noise_cdv["dv"] + noise_cdv["image_id"].str[-1].astype(int) * 0.04 - 0.06, 0, 1)
    )
    draw = curves.human_estimates(noise, wide, FIT, 0, name="w").curves["accuracy"]
    median = curves.HumanFit(SETTINGS, "auto", "median")
    med = curves.human_estimates(noise, wide, median, 0, name="w")
    med = med.curves["accuracy"]
    assert (draw.hi - draw.lo).mean() > (med.hi - med.lo).mean()


def user_trials(n_per=60, seed=0, repeats=0):
    """Trials with measured Δv and clean answers: accuracy falls from 0.9 to 0.1 over Δv; the
    first ``repeats`` trials of each participant show the clean image again (Δv = 0)."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(6):
        for k in range(n_per):
            dv = 0.0 if k < repeats else rng.uniform()
            label = int(rng.integers(16))
            right = rng.uniform() < 0.9 - 0.8 * dv
            clean_right = rng.uniform() < 0.92
            clean = label if clean_right else (label + 1) % 16
            resp = label if right else int(rng.integers(16))
            rows.append(
                {
                    "participant": f"p{p}",
                    "image_id": f"i{p}-{k}",
                    "label": label,
                    "response": resp,
                    "corruption": "gaussian_blur",
                    "dv": dv,
                    "clean_response": clean,
                }  # fmt: skip
            )
    return trial_schema.validate_trials(pd.DataFrame(rows))


def test_user_trials_give_both_curves():
    t = user_trials(repeats=10)
    est = curves.human_estimates(t, None, FIT, 0, name="humans")
    assert est.anchor == "clean-image accuracy"
    assert est.curves["accuracy"].anchor0 == pytest.approx(
        np.mean(t["clean_response"] == t["label"])
    )
    # s_p(0): the humans' own consistency on the clean image shown again, not 1
    again = t[t["dv"] == 0.0]
    expected = np.mean(again["response"] == again["clean_response"])
    assert est.curves["consistency"].anchor0 == pytest.approx(expected) and expected < 1.0
    assert est.curves["consistency"].n == int((t["dv"] > 0).sum())
    assert not est.skipped
    v = np.interp([0.1, 0.9], est.curves["accuracy"].grid, est.curves["accuracy"].values)
    assert v[0] > v[1] + 0.4


def test_human_consistency_without_clean_repeats_is_empty_with_its_reason():
    est = curves.human_estimates(user_trials(), None, FIT, 0, name="humans")
    assert "consistency" not in est.curves and "accuracy" in est.curves
    assert est.skipped["consistency"] == curves.NO_CLEAN_CONSISTENCY
    assert "not pinned at 1" in est.skipped["consistency"]


def test_anchor_options(noise):
    assert curves.accuracy_anchor(noise, 0.9)[0] == 0.9
    with pytest.raises(HumanDataError, match="needs trials with a recorded clean_response"):
        curves.accuracy_anchor(noise, "clean")
    with pytest.raises(HumanDataError, match="must lie in"):
        curves.accuracy_anchor(noise, 1.5)
    with pytest.raises(HumanDataError, match="'first'"):
        curves.accuracy_anchor(noise, "first")


def test_trials_without_dv_need_conditions(noise):
    with pytest.raises(HumanDataError, match="need the conditions table"):
        curves.human_estimates(noise, None, FIT, 0, name="humans")


def test_ingest(tmp_path):
    from vcrbench.plan.humans import reference_of

    t = stages.ingest_reference(
        reference_of("g", {"kind": "geirhos2018", "experiment": "lowpass"}),
        tmp_path / "trials.parquet",
    )
    assert len(t) == 7680
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "trials.parquet"), t, check_dtype=False
    )
    f = tmp_path / "mine.csv"
    user_trials(n_per=2).to_csv(f, index=False)
    entry = {"kind": "trials", "path": str(f), "corruption": "gaussian_blur"}
    assert len(stages.ingest_reference(reference_of("m", entry))) == 12
    with pytest.raises(HumanDataError, match=r"humans.references.m.corruption\) says 'blur'"):
        stages.ingest_reference(reference_of("m", {**entry, "corruption": "blur"}))


def test_human_curves_finish_like_every_estimate():
    # with_replicates (the human curves' last step) is estimate()'s own: the same replicates
    # give the same widened band and R̂ interval
    from vcrbench.estimation import estimate
    from vcrbench.estimation.estimate import with_replicates

    rng = np.random.default_rng(3)
    dv = rng.random(600)
    y = (rng.random(600) < 1 - 0.7 * dv).astype(float)
    groups = np.repeat(np.arange(6), 100)
    raw = estimate(
        dv, y, 0.95, EstimationSettings(n_boot=25, small_sample="none"), seed=4, groups=groups
    )
    full = estimate(
        dv, y, 0.95, EstimationSettings(n_boot=25, small_sample="t"), seed=4, groups=groups
    )
    point = estimate(dv, y, 0.95, EstimationSettings(n_boot=0), seed=4, groups=groups)
    done = with_replicates(point, raw.replicates, EstimationSettings(n_boot=25))
    assert not np.array_equal(done.replicates, raw.replicates)  # 6 observers: widened
    for name in ("replicates", "lo", "hi"):
        np.testing.assert_array_equal(getattr(done, name), getattr(full, name))
    assert (done.area_lo, done.area_hi) == (full.area_lo, full.area_hi)


def test_human_estimate_support_range():
    from vcrbench.estimation.storage import HumanEstimate

    est = HumanEstimate(curves={}, support={"accuracy": (0.2, 0.7, "rule")})
    assert est.support_range("accuracy") == (0.2, 0.7)
    assert est.support_range("consistency") == (0.0, 1.0)  # none recorded: all of [0, 1]
