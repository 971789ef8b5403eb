"""Workflow entry points for human references, end to end on a tiny clean set."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vcrbench.datasets import loading
from vcrbench.estimation.storage import read_human_estimate
from vcrbench.files import io
from vcrbench.humans import stages
from vcrbench.humans.curves import HumanFit
from vcrbench.humans.geirhos import stages as geirhos_stages
from vcrbench.humans.geirhos.networks import network_anchor
from vcrbench.humans.trial_schema import HumanDataError
from vcrbench.plan.humans import reference_of, references_of
from vcrbench.settings import DatasetSettings, HumanMappingSettings, VifSettings

SETTINGS = {"n_boot": 6, "min_count": 5}
FIT = HumanFit(SETTINGS, "auto", "draw")
LOWPASS = reference_of("geirhos2018-lowpass", {"kind": "geirhos2018", "experiment": "lowpass"})


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("humans")
    ds = loading.load_dataset(DatasetSettings())
    ds = ds[ds["image_id"].isin(["skimage-chelsea", "skimage-rocket"])]
    images, index = root / "images.npy", root / "index.parquet"
    loading.prepare_clean_set(ds, images, index, DatasetSettings(resize=128, crop=128))
    ref = root / "geirhos2018-lowpass"
    stages.ingest_reference(LOWPASS, ref / "trials.parquet")
    cdv = stages.map_conditions(
        ref / "trials.parquet", images, index, ref / "conditions.parquet",
        reference_name="geirhos2018-lowpass", seed=0,
        settings=HumanMappingSettings(n_images=None, draws=3), vif_settings=VifSettings(),
    )  # fmt: skip
    # anchored by the least-manipulated condition (the default, auto, would take the lab's
    # full-signal trials for a Geirhos reference)
    zero = HumanFit(SETTINGS, "zero-condition", "draw")
    est = stages.estimate_reference(
        ref / "trials.parquet", ref / "conditions.parquet", ref, reference=LOWPASS, fit=zero, seed=0
    )
    return {"root": root, "ref": ref, "cdv": cdv, "est": est, "images": images, "index": index}


def test_files(run):
    ref = run["ref"]
    for name in ("trials", "conditions", "bins", "curves", "summary", "replicates"):
        assert (ref / f"{name}.parquet").is_file()
    # the low-pass filter is deterministic: one draw per image whatever `draws` says
    assert (run["cdv"]["draw"] == 0).all() and len(run["cdv"]) == 8 * 2
    assert io.read_metadata(ref / "conditions.parquet")["reference"] == "original"
    back = read_human_estimate(ref)
    assert set(back.curves) == {"accuracy"} and back.anchor == run["est"].anchor
    assert back.support["accuracy"] == run["est"].support["accuracy"]  # written, read back
    np.testing.assert_allclose(
        back.curves["accuracy"].values, run["est"].curves["accuracy"].values
    )
    anchor = io.read_parquet(ref / "summary.parquet")["anchor"].iloc[0]
    assert anchor.startswith("accuracy in the zero")
    assert io.read_metadata(ref / "trials.parquet")["config"] == dict(LOWPASS.entry)


def test_dnn_table(run, tmp_path):
    ref = run["ref"]
    out = tmp_path / "table.csv"
    references = references_of(
        {
            "geirhos2018-lowpass": LOWPASS.entry,
            "mine": {"kind": "trials", "path": "x", "corruption": "blur"},
        }
    )
    table = geirhos_stages.dnn_table(
        references,
        {"geirhos2018-lowpass": ref / "conditions.parquet"},
        {"geirhos2018-lowpass": ref},
        out,
        fit=FIT,
        seed=0,
        metric_range="support",
        scenario_level=0.95,
    )
    assert table["network"].tolist() == ["googlenet", "resnet152", "vgg19"]
    assert (table["reference"] == "geirhos2018-lowpass").all()
    for col in ("HMRI", "MRSI", "R", "A_h"):
        assert ((table[col] >= 0) & (table[col] <= 1)).all()
        assert (table[f"{col}_lo"] <= table[col] + 1e-12).all()
        assert (table[f"{col}_hi"] >= table[col] - 1e-12).all()
    # the table's human curve is the reference's curve, integrated over its Δv support
    acc = run["est"].curves["accuracy"]
    lo, hi, _ = run["est"].support["accuracy"]
    assert (table["human_dv_lo"] == lo).all() and (table["human_dv_hi"] == hi).all()
    assert (table["metric_range"] == "support").all()
    inside = (acc.grid >= lo - 1e-12) & (acc.grid <= hi + 1e-12)
    assert np.allclose(table["A_h"], np.trapezoid(acc.values[inside], acc.grid[inside]))
    # humans are more robust to low-pass than these networks (Geirhos et al.'s finding)
    assert (table["HMRI"] < 1).all()
    assert pd.read_csv(out).shape[0] == 3
    # each row's scenario is reported where scenario_level of the replicates agree with it
    # (humans.scenario_level), "undetermined" below it
    determined = table["scenario"] != "undetermined"
    assert determined.tolist() == (table["scenario_support"] >= 0.95).tolist()
    assert not determined.all()  # 6 replicates: a lower level below has labels to give
    lenient = geirhos_stages.dnn_table(
        references, {"geirhos2018-lowpass": ref / "conditions.parquet"},
        {"geirhos2018-lowpass": ref}, tmp_path / "lenient.csv", fit=FIT, seed=0,
        metric_range="support", scenario_level=0.01,
    )  # fmt: skip
    assert (lenient["scenario"] != "undetermined").all()
    assert lenient.drop(columns="scenario").equals(table.drop(columns="scenario"))
    with pytest.raises(HumanDataError, match="no geirhos2018 reference"):
        geirhos_stages.dnn_table(
            {}, {}, {}, out, fit=FIT, seed=0, metric_range="support", scenario_level=0.95
        )


def test_user_trials_with_dv_need_no_conditions(run, tmp_path):
    f = tmp_path / "vcr.csv"
    rng = np.random.default_rng(0)
    rows = ["label,orig_pred,transf_pred,vd_score,transformation"]
    for i in range(300):
        dv = 0.0 if i < 30 else rng.uniform()  # 30 trials show the clean image again: s_p(0)
        rows.append(f"dog,dog,{'dog' if rng.uniform() < 1 - dv else 'cat'},{dv:.4f},Gaussian Blur")
    f.write_text("\n".join(rows) + "\n")
    mine = reference_of("mine", {"kind": "trials", "path": str(f), "corruption": "gaussian_blur"})
    stages.ingest_reference(mine, tmp_path / "trials.parquet")
    cdv = stages.map_conditions(
        tmp_path / "trials.parquet", run["images"], run["index"], tmp_path / "conditions.parquet",
        reference_name="mine", seed=0, settings=HumanMappingSettings(),
        vif_settings=VifSettings(),
    )  # fmt: skip
    assert cdv.empty
    est = stages.estimate_reference(
        tmp_path / "trials.parquet", tmp_path / "conditions.parquet", tmp_path / "est",
        reference=mine, fit=HumanFit(SETTINGS, "clean", "draw"), seed=0,
    )  # fmt: skip
    assert set(est.curves) == {"accuracy", "consistency"} and est.anchor == "clean-image accuracy"
    # clean answers recorded: data at Δv = 0, so both supports start there
    assert est.support["accuracy"][0] == 0.0 and est.support["consistency"][0] == 0.0
    assert est.curves["accuracy"].anchor0 == 1.0  # every clean answer was right


def test_networks_anchor_like_auto():
    # the ImageNet networks answered the colour experiment (full signal), the trained ones never
    # saw unmanipulated images: "auto" resolves as for any trials without clean answers
    assert network_anchor("auto", full_signal=True) == "full-signal"
    assert network_anchor("clean", full_signal=True) == "full-signal"
    assert network_anchor("auto", full_signal=False) == "zero-condition"
    assert network_anchor("zero-condition", full_signal=True) == "zero-condition"
    assert network_anchor(0.9, full_signal=False) == 0.9
