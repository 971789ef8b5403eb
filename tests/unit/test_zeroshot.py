"""Zero-shot protocols along Δv: class-balanced weights in Alg. 1, seen/unseen/H curves, the
per-class and class-transition tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vcrbench import estimation
from vcrbench.bins import bin_index
from vcrbench.estimation import fit_curve
from vcrbench.estimation.zeroshot import (
    balance_weights,
    class_groups,
    class_table,
    harmonic,
    transition_table,
    zero_shot_estimates,
)
from vcrbench.settings import EstimationSettings

SETTINGS = {"bins": 10, "min_count": 5, "n_boot": 30, "level": 0.95, "lam": 1e-2}


def test_weights_of_one_change_nothing_and_integer_weights_duplicate_samples():
    rng = np.random.default_rng(0)
    dv = rng.uniform(0, 1, 400)
    y = (rng.uniform(size=400) < 1 - 0.7 * dv).astype(float)
    plain = fit_curve(dv, y, 0.95, EstimationSettings(bins=10, min_count=5, lam=1e-2), seed=0)
    ones = fit_curve(
        dv,
        y,
        0.95,
        EstimationSettings(bins=10, min_count=5, lam=1e-2),
        seed=0,
        weights=np.ones(400),
    )
    np.testing.assert_allclose(ones.values, plain.values)
    w = rng.integers(1, 4, 400)
    weighted = fit_curve(
        dv, y, 0.95, EstimationSettings(bins=10, min_count=5, lam=1e-2), seed=0, weights=w
    )
    dup = fit_curve(
        np.repeat(dv, w),
        np.repeat(y, w),
        0.95,
        EstimationSettings(bins=10, min_count=5, lam=1e-2),
        seed=0,
    )
    np.testing.assert_allclose(weighted.values, dup.values, atol=1e-9)
    with pytest.raises(ValueError, match="weights has 3 values but correct has 400"):
        fit_curve(dv, y, 0.95, seed=0, weights=[1, 2, 3])
    with pytest.raises(ValueError, match="non-negative"):
        fit_curve(dv, y, 0.95, seed=0, weights=-np.ones(400))


def test_balance_weights_make_bin_rates_the_mean_of_class_rates():
    rng = np.random.default_rng(1)
    labels = rng.choice(3, size=300, p=[0.7, 0.2, 0.1])
    dv = rng.uniform(0, 1, 300)
    ok = rng.uniform(size=300) < np.array([0.9, 0.5, 0.1])[labels]
    j = bin_index(dv, 4)
    w = balance_weights(labels, j)
    for b in np.unique(j):
        at = j == b
        class_rates = [ok[at & (labels == c)].mean() for c in np.unique(labels[at])]
        assert np.isclose(w[at].sum(), at.sum())  # the bin keeps its sample count
        assert np.isclose((w[at] * ok[at]).sum() / w[at].sum(), np.mean(class_rates))
    overall = balance_weights(labels)
    assert np.isclose(
        (overall * ok).sum() / overall.sum(), np.mean([ok[labels == c].mean() for c in range(3)])
    )


def _imbalanced(n_big=600, n_small=60, seed=3):
    """Class 0 (many images) always right, class 1 (few) always wrong, at every Δv."""
    rng = np.random.default_rng(seed)
    labels = np.r_[np.zeros(n_big, int), np.ones(n_small, int)]
    ids = [f"img{i}" for i in range(len(labels))]
    preds = pd.DataFrame(
        {
            "sample_id": np.arange(len(labels)),
            "image_id": ids,
            "label": labels,
            "dv": rng.uniform(0, 1, len(labels)),
            "pred": np.zeros(len(labels), int),  # always predicts class 0
        }
    )
    clean = preds.assign(dv=0.0)
    return preds, clean


def test_class_mean_seen_unseen_and_h_curves():
    preds, clean = _imbalanced()
    found = zero_shot_estimates(
        preds, clean, seen=[0], unseen=[1], settings=SETTINGS, seed_of=lambda name: 5
    )
    assert set(found) == {
        "class_mean_accuracy",
        "seen_accuracy",
        "unseen_accuracy",
        "harmonic_mean",
    }
    plain = estimation.estimate(
        preds["dv"], (preds["pred"] == preds["label"]).astype(float), 600 / 660,
        EstimationSettings(bins=10, min_count=5, n_boot=0, lam=1e-2), seed=0,
    )  # fmt: skip
    assert plain.area > 0.85  # sample accuracy: dominated by the big class
    cm = found["class_mean_accuracy"]
    assert cm.anchor0 == pytest.approx(0.5)
    np.testing.assert_allclose(cm.values, 0.5, atol=1e-6)  # mean of 1 and 0 at every Δv
    assert cm.area == pytest.approx(0.5, abs=1e-6)
    assert found["seen_accuracy"].area == pytest.approx(1.0, abs=1e-6)
    assert found["unseen_accuracy"].area == pytest.approx(0.0, abs=1e-6)
    h = found["harmonic_mean"]
    np.testing.assert_allclose(h.values, 0.0, atol=1e-6)
    assert h.replicates.shape == found["seen_accuracy"].replicates.shape
    # without a split only the per-class mean
    only = zero_shot_estimates(
        preds, clean, seen=None, unseen=None, settings=SETTINGS, seed_of=lambda name: 5
    )
    assert set(only) == {"class_mean_accuracy"}


def test_harmonic_mean_curve_is_pointwise():
    rng = np.random.default_rng(4)
    n = 800
    labels = rng.integers(0, 4, n)
    dv = rng.uniform(0, 1, n)
    # seen classes 0, 1 lose accuracy slowly, unseen 2, 3 fast
    p = np.where(labels < 2, 0.9 - 0.3 * dv, 0.7 - 0.6 * dv)
    pred = np.where(rng.uniform(size=n) < p, labels, (labels + 1) % 4)
    preds = pd.DataFrame(
        {"sample_id": np.arange(n), "image_id": [f"i{k}" for k in range(n)], "label": labels,
         "dv": dv, "pred": pred}
    )  # fmt: skip
    clean = preds.assign(dv=0.0, pred=labels)
    found = zero_shot_estimates(
        preds, clean, seen=[0, 1], unseen=[2, 3], settings=SETTINGS, seed_of=lambda s: 1
    )
    s, u, h = found["seen_accuracy"], found["unseen_accuracy"], found["harmonic_mean"]
    np.testing.assert_allclose(h.values, harmonic(s.values, u.values))
    np.testing.assert_allclose(h.replicates, harmonic(s.replicates, u.replicates), atol=1e-6)
    assert s.area > u.area and u.area < h.area < s.area
    assert h.area_lo <= h.area <= h.area_hi


def test_transition_table_counts():
    # clean: correct, correct, false, false, false; corrupted: correct, false, correct, other, same
    preds = pd.DataFrame(
        {"sample_id": range(5), "image_id": list("abcde"), "label": [0, 1, 2, 0, 1],
         "dv": [0.1, 0.1, 0.5, 0.5, 0.9], "pred": [0, 2, 2, 1, 0]}
    )  # fmt: skip
    clean = pd.DataFrame(
        {"image_id": list("abcde"), "label": [0, 1, 2, 0, 1], "pred": [0, 1, 0, 2, 0]}
    )
    groups = class_groups(3, seen=[0, 1], unseen=[2])
    t = transition_table(preds, clean, model="m", corruption="c", groups=groups, n_bins=3)
    overall = t[(t["group"] == "all") & (t["bin"] == -1)].iloc[0]
    assert (overall["n"], overall["n_clean_correct"], overall["n_clean_false"]) == (5, 2, 3)
    assert overall["CF"] == pytest.approx(1 / 2)  # b
    assert overall["FC"] == pytest.approx(1 / 3)  # c
    assert overall["FF"] == pytest.approx(1 / 3)  # d (e kept its false class)
    assert overall["n_changed"] == 3  # b -> 2 (unseen), c -> 2 (unseen), d -> 1 (seen)
    assert overall["to_unseen"] == pytest.approx(2 / 3) and overall["to_seen"] == pytest.approx(
        1 / 3
    )
    unseen = t[(t["group"] == "unseen") & (t["bin"] == -1)].iloc[0]
    assert unseen["n"] == 1 and unseen["FC"] == 1.0
    assert set(t["bin"]) == {-1, 0, 1}
    plain = transition_table(preds, clean, model="m", corruption="c", n_bins=2)
    assert set(plain["group"]) == {"all"} and plain["to_seen"].isna().all()


def test_class_table():
    preds, clean = _imbalanced(n_big=20, n_small=10)
    t = class_table(preds, clean, model="m", corruption="c", class_names=["big", "small"],
                    groups=class_groups(2, [0], [1]), n_bins=2)  # fmt: skip
    assert t.groupby("class")["n"].sum().to_dict() == {0: 20, 1: 10}
    assert (t[t["class"] == 0]["accuracy"] == 1).all() and (
        t[t["class"] == 1]["correct"] == 0
    ).all()
    assert set(t["class_name"]) == {"big", "small"} and set(t["group"]) == {"seen", "unseen"}
    assert (
        t["clean_accuracy"].tolist()
        == [1.0] * (t["class"] == 0).sum() + [0.0] * (t["class"] == 1).sum()
    )
