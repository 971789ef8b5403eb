"""The analysis options that read the VCR authors' toolbox against the paper's text:
``estimation.empty_bins`` (the toolbox fills empty bins with 0), ``estimation.decision16`` (mean,
sum, or the toolbox's top-1 then mapped) and ``estimation.anchor1: chance`` (s(1) at 1/K)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from vcrbench import estimation, schema
from vcrbench.estimation.counts import EMPTY_BINS, zero_filled
from vcrbench.evaluation import outcomes
from vcrbench.labels import (
    DECISION16_RULES,
    PROB16_COLUMNS,
    decide_16_by,
    geirhos16_imagenet_indices,
    imagenet_to_16,
)
from vcrbench.plan import config as plan_config
from vcrbench.settings import ANCHOR1_CHANCE, CHANCE_CLASSES, EstimationSettings, chance_level
from vcrbench.vocab import GEIRHOS16_CLASSES


def _samples(seed=0, n=600, low=0.45):
    """Δv only above ``low`` (the bins below are empty, as shot noise's are), accuracy 1 - Δv."""
    rng = np.random.default_rng(seed)
    dv = rng.uniform(low, 1.0, n)
    return dv, (rng.random(n) < 1 - dv).astype(float)


# ------------------------------------------------------------------------------------ empty bins


@pytest.mark.parametrize("spline", ["pspline", "quantile"])
def test_zero_filled_bins_pull_the_curve_down_where_bins_are_empty(spline):
    dv, y = _samples()
    skip = estimation.fit_curve(
        dv, y, 0.9, EstimationSettings(min_count=3, spline=spline, lam=1e-3), seed=0
    )
    zero = estimation.fit_curve(
        dv,
        y,
        0.9,
        EstimationSettings(min_count=3, spline=spline, lam=1e-3, empty_bins="zero"),
        seed=0,
    )
    used = skip.bins["used"].to_numpy()
    assert not used[:17].any() and used[18:39].all()  # bins 0-16 (Δv < .44) hold no sample
    # bridged from s(0) = .9 to the data without them; pulled to 0 near Δv = 0 with them
    assert skip(np.array([0.2]))[0] > 0.6
    assert zero(np.array([0.2]))[0] < 0.2
    assert zero.area() < skip.area() - 0.25


def test_zero_filling_changes_nothing_where_no_bin_is_empty():
    rng = np.random.default_rng(1)
    dv = np.r_[rng.uniform(0, 1, 2000), np.ones(5)]  # bin 39 holds only v = 1
    y = (rng.random(len(dv)) < 1 - dv).astype(float)
    settings = EstimationSettings(min_count=3, lam=1e-3, n_boot=5)
    skip = estimation.estimate(dv, y, 0.95, settings, seed=2)
    zero = estimation.estimate(dv, y, 0.95, replace(settings, empty_bins="zero"), seed=2)
    assert skip.bins["used"].all()
    np.testing.assert_array_equal(zero.values, skip.values)
    np.testing.assert_array_equal(zero.replicates, skip.replicates)


def test_a_zero_filled_bin_sits_at_its_centre_with_the_mean_used_weight():
    x = np.array([0.0, 0.3, 0.0, 1.0])
    count = np.array([0.0, 4.0, 0.0, 8.0])
    correct = np.array([0.0, 2.0, 0.0, 1.0])
    used = np.array([False, True, False, True])
    fx, fcount, fcorrect = zero_filled(x, count, correct, used, n_bins=4)
    np.testing.assert_allclose(fx, [1 / 6, 0.3, 5 / 6, 1.0])  # bin j spans [j/3, (j+1)/3)
    np.testing.assert_allclose(fcount, [6.0, 4.0, 6.0, 8.0])
    np.testing.assert_allclose(fcorrect, [0.0, 2.0, 0.0, 1.0])


def test_empty_bins_is_checked_and_in_the_schema():
    node = schema.schema()["properties"]["estimation"]["properties"]["empty_bins"]
    assert tuple(node["enum"]) == EMPTY_BINS and node["default"] == "skip"
    dv, y = _samples()
    with pytest.raises(ValueError, match="empty_bins must be one of"):
        estimation.fit_curve(dv, y, 0.9, EstimationSettings(empty_bins="previous"), seed=0)


# ------------------------------------------------------------------------------ 1000 -> 16 rules


def _crafted_probabilities() -> np.ndarray:
    """One image: 0.3 on a class outside the 207 (the top-1), 0.5 spread over every dog class,
    0.2 on one bear class. Sum: dog; mean: bear (few classes); top-1 then mapped: none."""
    fine = geirhos16_imagenet_indices()
    p = np.zeros(1000)
    outside = next(i for i in range(1000) if imagenet_to_16([i])[0] < 0)
    p[outside] = 0.3
    p[list(fine["dog"])] = 0.5 / len(fine["dog"])
    p[fine["bear"][0]] = 0.2
    assert p.argmax() == outside and np.isclose(p.sum(), 1.0)
    return p[None, :]


def test_the_three_rules_decide_differently_on_a_crafted_vector():
    from vcrbench.labels import probabilities_to_16

    p = _crafted_probabilities()
    prob16 = probabilities_to_16(p)  # what a prediction file keeps (prob16_<class>)
    pred = p.argmax(axis=1)
    cls = GEIRHOS16_CLASSES.index
    assert decide_16_by("mean", pred, prob16)[0] == cls("bear")
    assert decide_16_by("sum", pred, prob16)[0] == cls("dog")
    assert decide_16_by("top1", pred)[0] == -1
    # a top-1 inside the 207 maps to its class
    assert decide_16_by("top1", np.array([geirhos16_imagenet_indices()["cat"][0]]))[0] == cls("cat")
    with pytest.raises(Exception, match="decision16 must be one of"):
        decide_16_by("vote", pred, prob16)


def _prediction_frames(tmp_path):
    """Image a (a bear) answered with the crafted vector at Δv .5 twice; clean: the same."""
    p = _crafted_probabilities()
    from vcrbench.labels import probabilities_to_16

    prob16 = probabilities_to_16(p)[0].astype(np.float32)
    bear = geirhos16_imagenet_indices()["bear"][0]

    def frame(n, dv):
        out = pd.DataFrame(
            {
                "sample_id": np.arange(n),
                "image_id": ["a"] * n,
                "label": np.full(n, bear),
                "dv": np.full(n, dv),
                "pred": np.full(n, p.argmax(), dtype=np.int32),
                "prob_label": np.float32(0.2),
                "pred16": np.full(n, GEIRHOS16_CLASSES.index("bear"), dtype=np.int8),
                "label16": np.full(n, GEIRHOS16_CLASSES.index("bear"), dtype=np.int8),
            }
        )
        for name, v in zip(PROB16_COLUMNS, prob16, strict=True):
            out[name] = v
        return out

    return frame(2, 0.5), frame(1, 0.0)


@pytest.mark.parametrize(
    ("rule", "correct", "same"), [("mean", 1, 1), ("sum", 0, 1), ("top1", 0, 0)]
)
def test_outcomes_follow_the_rule_and_no_class_is_never_consistent(tmp_path, rule, correct, same):
    preds, clean = _prediction_frames(tmp_path)
    obs = outcomes.outcomes(preds, clean, "geirhos16", "imagenet1k", decision16=rule)
    assert list(obs["a"].y) == [correct, correct] and list(obs["a"].anchor) == [correct]
    assert list(obs["p"].y) == [same, same]
    # the dataset's own label space does not depend on the rule
    own = outcomes.outcomes(preds, clean, "imagenet1k", "imagenet1k", decision16=rule)
    assert list(own["a"].y) == [0, 0]


def test_sum_reads_the_probability_columns_and_the_others_do_not():
    assert outcomes.extra_columns("sum") == PROB16_COLUMNS
    assert outcomes.extra_columns("mean") == outcomes.extra_columns("top1") == ()
    node = schema.schema()["properties"]["estimation"]["properties"]["decision16"]
    assert tuple(node["enum"]) == DECISION16_RULES and node["default"] == "mean"


# --------------------------------------------------------------------------------- anchor chance


@pytest.mark.parametrize(("space", "k"), [("geirhos16", 16), ("imagenet1k", 1000)])
def test_anchor_at_chance_pins_s1_at_one_over_k(space, k):
    dv, y = _samples(low=0.0)
    block = {"anchor1": ANCHOR1_CHANCE, "n_boot": 5, "min_count": 3}
    settings = EstimationSettings.of_config(block).for_label_space(space, anchor0=0.9)
    assert settings.anchor1 == pytest.approx(1 / k) == chance_level(space)
    est = estimation.estimate(dv, y, 0.9, settings, seed=0)
    assert est.values[-1] == pytest.approx(1 / k)
    assert est.values.min() >= 1 / k - 1e-12 and est.anchor1 == pytest.approx(1 / k)
    free = estimation.estimate(dv, y, 0.9, EstimationSettings(n_boot=5, min_count=3), seed=0)
    assert free.values[-1] != pytest.approx(1 / k)


def test_chance_is_capped_at_s0_and_needs_a_known_label_space():
    settings = EstimationSettings(anchor1=ANCHOR1_CHANCE)
    low = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 1.0])  # clean accuracy 1/6... of a 6-image set
    assert settings.for_label_space("geirhos16", anchor0=0.02).anchor1 == 0.02
    assert settings.for_label_space("geirhos16", anchor0=low).anchor1 == 1 / 16
    assert settings.for_label_space("geirhos16").anchor1 == 1 / 16
    with pytest.raises(ValueError, match="needs the label space"):
        settings.for_label_space(None)
    with pytest.raises(ValueError, match="needs the label space"):  # unresolved, an estimate
        estimation.estimate(*_samples(low=0.0), 0.9, settings, seed=0)
    with pytest.raises(ValueError, match="not for label space 'cub200'"):
        settings.for_label_space("cub200")
    assert set(CHANCE_CLASSES) == {"imagenet1k", "geirhos16"}


def test_the_anchor1_schema_takes_null_a_number_or_chance():
    for value in (None, 0.0, 0.5, "chance"):
        assert schema.validate_block("estimation", {"anchor1": value})["anchor1"] == value
    for value in ("half", 1.5, -0.1):
        with pytest.raises(Exception, match="anchor1"):
            schema.validate_block("estimation", {"anchor1": value})


# -------------------------------------------------------------------------------------- params


def test_the_new_keys_stay_out_of_params_at_their_defaults():
    config = {"estimation": {"bins": 40, "empty_bins": "skip", "decision16": "mean"}}
    assert plan_config.params_section(config, "estimation") == {"bins": 40}
    config["estimation"].update(empty_bins="zero", decision16="top1")
    section = plan_config.params_section(config, "estimation")
    assert (section["empty_bins"], section["decision16"]) == ("zero", "top1")


def test_the_run_refuses_chance_on_a_label_space_of_unknown_size():
    from vcrbench.errors import ConfigError
    from vcrbench.plan import checks

    own = {"label_space": {"name": "birds", "num_classes": 200}}
    with pytest.raises(ConfigError, match="'estimation.anchor1': chance is known for"):
        checks._check_anchor1({"dataset": own, "estimation": {"anchor1": "chance"}})
    checks._check_anchor1({"dataset": own, "estimation": {"anchor1": 0.005}})  # a number: fine
    imagenet = {"label_space": "imagenet1k"}
    checks._check_anchor1({"dataset": imagenet, "estimation": {"anchor1": "chance"}})
