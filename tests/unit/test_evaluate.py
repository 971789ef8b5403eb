"""vcrbench.evaluation.outcomes (outcomes per label space) and vcrbench.evaluation.evaluate (the
metrics of one model on one corruption)."""

import numpy as np
import pandas as pd
import pytest

from vcrbench import estimation
from vcrbench.errors import LabelSpaceError
from vcrbench.estimation import metrics
from vcrbench.estimation.storage import HumanEstimate, write_human_estimate
from vcrbench.evaluation import evaluate, outcomes
from vcrbench.files import io
from vcrbench.settings import EstimationSettings
from vcrbench.vocab import IMAGENET_C_COLUMNS

IMAGES = ["a", "b", "c", "d"]
LABELS = [1, 2, -1, 3]  # "c" is unlabelled
LABEL16 = [0, -1, -1, 5]


def clean_predictions():
    return pd.DataFrame(
        {
            "sample_id": np.arange(4),
            "image_id": IMAGES,
            "label": LABELS,
            "dv": 0.0,
            "pred": np.array([1, 9, 4, 3], dtype=np.int32),  # a, d right; b wrong
            "prob_label": np.float32(0.5),
            "pred16": np.array([0, 1, 2, 5], dtype=np.int8),
            "label16": np.array(LABEL16, dtype=np.int8),
        }
    )


def test_outcomes_in_the_dataset_space():
    rng = np.random.default_rng(0)
    n = 400
    image = rng.integers(0, 4, n)
    preds = pd.DataFrame(
        {
            "sample_id": np.arange(n),
            "image_id": np.array(IMAGES)[image],
            "label": np.array(LABELS)[image],
            "dv": rng.random(n),
            "pred": rng.integers(0, 4, n).astype(np.int32),
            "pred16": rng.integers(0, 6, n).astype(np.int8),
            "label16": np.array(LABEL16, dtype=np.int8)[image],
        }
    )
    clean = clean_predictions()
    obs = outcomes.outcomes(preds, clean, "imagenet1k", "imagenet1k", decision16="mean")
    dv_a, y_a, anchor_a, images_a, anchor_images = obs["a"]
    labelled = preds["label"].to_numpy() >= 0
    # the bootstrap's unit is the image: each sample and each clean outcome carries its image id
    assert np.array_equal(images_a, preds["image_id"].to_numpy()[labelled])
    assert anchor_images.tolist() == ["a", "b", "d"]
    assert len(y_a) == labelled.sum()
    assert np.array_equal(y_a, (preds["pred"] == preds["label"]).to_numpy()[labelled])
    assert np.array_equal(anchor_a, [1.0, 0.0, 1.0])  # clean a, b, d
    dv_p, y_p, anchor_p, images_p, no_anchor_images = obs["p"]
    assert np.array_equal(images_p, preds["image_id"].to_numpy()) and no_anchor_images is None
    clean_pred = clean.set_index("image_id")["pred"]
    assert np.array_equal(
        y_p, (preds["pred"].to_numpy() == clean_pred[preds["image_id"]].to_numpy())
    )
    assert anchor_p == 1.0 and len(y_p) == n

    obs16 = outcomes.outcomes(preds, clean, "geirhos16", "imagenet1k", decision16="mean")
    has16 = preds["label16"].to_numpy() >= 0
    assert len(obs16["a"][1]) == has16.sum()
    assert np.array_equal(obs16["a"][2], [1.0, 1.0])  # clean a and d decide their 16-class

    no16 = preds.assign(pred16=np.int8(-1))
    assert outcomes.outcomes(no16, clean, "geirhos16", "imagenet1k", decision16="mean") is None
    with pytest.raises(LabelSpaceError, match="cub200"):
        outcomes.outcomes(preds, clean, "cub200", "imagenet1k", decision16="mean")


def test_missing_clean_prediction_is_an_error():
    preds = clean_predictions().assign(image_id=["a", "b", "c", "zz"])
    with pytest.raises(evaluate.EvaluationError, match="zz"):
        outcomes.outcomes(preds, clean_predictions(), "imagenet1k", "imagenet1k", decision16="mean")


def synthetic_run(tmp_path, n=3000, seed=1):
    """Predictions whose accuracy falls linearly with dv; a deterministic clean pass."""
    rng = np.random.default_rng(seed)
    image = rng.integers(0, 4, n)
    dv = rng.random(n)
    clean = clean_predictions()
    keep = rng.random(n) > dv  # keep the clean prediction with probability 1 - dv
    clean_pred = clean["pred"].to_numpy()[image]
    pred = np.where(keep, clean_pred, 999).astype(np.int32)
    pred16 = np.where(keep, clean["pred16"].to_numpy()[image], 7).astype(np.int8)
    preds = pd.DataFrame(
        {
            "sample_id": np.arange(n),
            "image_id": np.array(IMAGES)[image],
            "label": np.array(LABELS)[image],
            "dv": dv,
            "pred": pred,
            "prob_label": np.float32(0.5),
            "pred16": pred16,
            "label16": np.array(LABEL16, dtype=np.int8)[image],
        }
    )
    paths = [tmp_path / "g0.parquet", tmp_path / "g1.parquet"]
    io.write_parquet(preds.iloc[: n // 2], paths[0])
    io.write_parquet(preds.iloc[n // 2 :], paths[1])
    io.write_parquet(clean, tmp_path / "clean.parquet")
    return paths, tmp_path / "clean.parquet"


SETTINGS = {
    "bins": 40,
    "min_count": 5,
    "n_boot": 30,
    "level": 0.95,
    "label_spaces": ["dataset", "geirhos16"],
}


def test_evaluate_writes_curves_and_metrics(tmp_path):
    paths, clean = synthetic_run(tmp_path)
    table = evaluate.evaluate(
        paths, clean, tmp_path / "out", model="m", corruption="gaussian_noise",
        settings=SETTINGS, seed=0, label_spaces=["dataset", "geirhos16"], scenario_level=0.95,
        short_label_space="status",
    )  # fmt: skip
    assert list(table["label_space"]) == ["imagenet1k", "geirhos16"]
    consistency = table.set_index("label_space").loc["imagenet1k", "R_p"]
    # P(keep) = 1 - dv: consistency area 1/2 (plus chance agreements: none, 999 is never clean)
    assert consistency == pytest.approx(0.5, abs=0.03)
    row = table.set_index("label_space").loc["imagenet1k"]
    assert row["clean_accuracy"] == pytest.approx(2 / 3)
    assert row["R_a"] == pytest.approx(row["clean_accuracy"] / 2, abs=0.05)
    assert row["R_a_lo"] <= row["R_a"] <= row["R_a_hi"]
    assert np.isnan(row["HMRI_a"]) and row["human_reference"] is None
    curves = io.read_parquet(tmp_path / "out" / "curves.parquet")
    assert set(curves["property"]) == {"accuracy", "consistency"}
    assert (
        curves.groupby(["label_space", "property"])["s"].apply(lambda s: s.diff().max()) <= 1e-12
    ).all()
    again = evaluate.evaluate(
        paths, clean, tmp_path / "out2", model="m", corruption="gaussian_noise",
        settings=SETTINGS, seed=0, label_spaces=["dataset", "geirhos16"], scenario_level=0.95,
        short_label_space="status",
    )  # fmt: skip
    for name in ("bins", "curves", "metrics"):
        assert (tmp_path / "out" / f"{name}.parquet").read_bytes() == (
            tmp_path / "out2" / f"{name}.parquet"
        ).read_bytes()
    pd.testing.assert_frame_equal(table, again)


def evaluate_against_reference(paths, clean, tmp_path):
    """evaluate() of model m on gaussian noise against the reference written to humans/."""
    return evaluate.evaluate(
        paths, clean, tmp_path / "out", model="m", corruption="gaussian_noise",
        settings=SETTINGS, seed=0, reference="ref", reference_how="own",
        reference_dir=tmp_path / "humans", label_spaces=SETTINGS["label_spaces"],
        scenario_level=0.95, short_label_space="status",
    )  # fmt: skip


def test_hmri_against_a_human_reference_in_the_16_class_space(tmp_path):
    paths, clean = synthetic_run(tmp_path)
    rng = np.random.default_rng(5)
    dv = rng.random(4000)
    human_correct = (rng.random(4000) < 1.0 - 0.3 * dv).astype(float)  # humans better at high dv
    human = estimation.estimate(
        dv, human_correct, 1.0, EstimationSettings(n_boot=30, min_count=5), seed=1
    )
    write_human_estimate(HumanEstimate(curves={"accuracy": human}), tmp_path / "humans")
    table = evaluate_against_reference(paths, clean, tmp_path)
    t = table.set_index("label_space")
    assert np.isnan(t.loc["imagenet1k", "HMRI_a"])  # human data are 16-class
    g = t.loc["geirhos16"]
    assert 0 < g["HMRI_a"] < 1 and g["HMRI_a_lo"] <= g["HMRI_a"] <= g["HMRI_a_hi"]
    assert g["MRSI_a"] == pytest.approx(0, abs=1e-6)  # the point scenario: humans better
    # with 3 labelled images the bootstrap rarely agrees on it: labelled only at >= 95% agreement
    assert 0 <= g["scenario_a_share"] <= 1
    expected = "humans better everywhere" if g["scenario_a_share"] >= 0.95 else "undetermined"
    assert g["scenario_a"] == expected
    assert (g["human_dv_lo_a"], g["human_dv_hi_a"]) == (0.0, 1.0)  # written before supports existed
    assert g["HMRI_a_support"] == g["HMRI_a"]  # support [0, 1]: the same integral
    assert np.isnan(g["HMRI_p"])  # the reference has no consistency curve
    assert g["human_reference"] == "ref" and g["reference_how"] == "own"


def test_hmri_over_zero_one_as_the_paper_and_over_the_support_as_extra_columns(tmp_path):
    paths, clean = synthetic_run(tmp_path)
    rng = np.random.default_rng(5)
    dv = rng.random(4000) * 0.5  # human data only up to dv = 0.5
    human_correct = (rng.random(4000) < 1.0 - 0.3 * dv).astype(float)
    est = estimation.estimate(
        dv, human_correct, 1.0, EstimationSettings(n_boot=30, min_count=5), seed=1
    )
    human = HumanEstimate(curves={"accuracy": est}, support={"accuracy": (0.0, 0.5, "test")})
    write_human_estimate(human, tmp_path / "humans")
    table = evaluate_against_reference(paths, clean, tmp_path)
    g = table.set_index("label_space").loc["geirhos16"]
    curves = io.read_parquet(tmp_path / "out" / "curves.parquet")
    s_m = curves.query("label_space == 'geirhos16' and property == 'accuracy'").sort_values("v")
    s_m = s_m["s"].to_numpy()
    full = metrics.human_aware(est.values, s_m, est.grid)
    part = metrics.human_aware(est.values, s_m, est.grid, support=(0.0, 0.5))
    assert g["HMRI_a"] == pytest.approx(full["HMRI"]) and g["MRSI_a"] == pytest.approx(full["MRSI"])
    assert g["HMRI_a_support"] == pytest.approx(part["HMRI"])
    assert g["MRSI_a_support"] == pytest.approx(part["MRSI"])
    assert g["HMRI_a_support"] != pytest.approx(g["HMRI_a"])
    assert g["HMRI_a_support_lo"] <= g["HMRI_a_support"] <= g["HMRI_a_support_hi"]
    assert (g["human_dv_lo_a"], g["human_dv_hi_a"]) == (0.0, 0.5)
    assert "metric_range" not in table


def test_collect_metrics_orders_rows_and_columns(tmp_path):
    rows = [
        {"model": "b", "corruption": "x", "label_space": "imagenet1k", "R_a": 0.5},
        {"model": "a", "corruption": "y", "label_space": "imagenet1k", "R_a": 0.25},
    ]
    for i, row in enumerate(rows):
        io.write_parquet(pd.DataFrame([row]), tmp_path / f"{i}.parquet")
    table = evaluate.collect_metrics(
        [tmp_path / "0.parquet", tmp_path / "1.parquet"], tmp_path / "t.csv"
    )
    assert list(table.columns) == evaluate.METRIC_COLUMNS
    assert list(table["model"]) == ["a", "b"]
    assert pd.read_csv(tmp_path / "t.csv")["R_a"].tolist() == [0.25, 0.5]


# --------------------------------------------------------------------------- ImageNet-C


def prediction_frame(image_ids, labels, preds, label16, pred16, severity=None):
    df = pd.DataFrame(
        {
            "sample_id": np.arange(len(image_ids)),
            "image_id": image_ids,
            "label": labels,
            "dv": 0.5,
            "pred": np.asarray(preds, dtype=np.int32),
            "prob_label": np.float32(0.5),
            "pred16": np.asarray(pred16, dtype=np.int8),
            "label16": np.asarray(label16, dtype=np.int8),
        }
    )
    if severity is not None:
        df["severity"] = severity
    return df


def test_imagenet_c_accuracy_per_severity_and_mean(tmp_path):
    ids = ["i0", "i1", "i2", "i3"]
    labels = [1, 2, 3, -1]  # i3 unlabelled: counts for consistency only
    clean = prediction_frame(ids, labels, [1, 2, 3, 7], [0, -1, 4, -1], [0, 5, 4, 2])
    sev = np.repeat([1, 2], 4)
    inc = prediction_frame(
        ids * 2,
        labels * 2,
        [1, 2, 9, 7, 1, 0, 0, 0],  # severity 1: 2/3 correct, 3/4 same; severity 2: 1/3, 1/4
        [0, -1, 4, -1] * 2,
        [0, 5, 4, 2, 1, 5, 1, 2],
        severity=sev,
    )
    io.write_parquet(clean, tmp_path / "m" / "clean.parquet")
    io.write_parquet(inc, tmp_path / "m" / "imagenet-c" / "frost.parquet")
    out = evaluate.imagenet_c_accuracy(
        {("m", "frost"): tmp_path / "m" / "imagenet-c" / "frost.parquet"},
        {"m": tmp_path / "m" / "clean.parquet"},
        label_spaces=evaluate.IMAGENET_C_LABEL_SPACES,
    )
    io.write_csv(out, tmp_path / "acc.csv")
    assert list(out.columns) == IMAGENET_C_COLUMNS
    one = out.set_index(["label_space", "severity"])
    assert one.loc[("imagenet1k", "1"), "accuracy"] == pytest.approx(2 / 3)
    assert one.loc[("imagenet1k", "1"), "consistency"] == pytest.approx(3 / 4)
    assert one.loc[("imagenet1k", "2"), "accuracy"] == pytest.approx(1 / 3)
    assert one.loc[("imagenet1k", "mean"), "accuracy"] == pytest.approx(0.5)
    assert (
        one.loc[("imagenet1k", "mean"), "n"] == 6
        and one.loc[("imagenet1k", "mean"), "n_images"] == 8
    )
    # 16 classes: labelled images i0, i2; severity 1 both right, severity 2 both wrong
    assert one.loc[("geirhos16", "1"), "accuracy"] == 1.0
    assert one.loc[("geirhos16", "2"), "accuracy"] == 0.0
    assert one.loc[("geirhos16", "2"), "consistency"] == pytest.approx(2 / 4)
    assert set(pd.read_csv(tmp_path / "acc.csv")["model"]) == {"m"}


def test_imagenet_c_accuracy_errors_and_other_label_spaces(tmp_path):
    clean = prediction_frame(["i0"], [1], [1], [-1], [-1])
    inc = prediction_frame(["i0", "i9"], [1, 1], [1, 1], [-1, -1], [-1, -1], severity=[1, 1])
    io.write_parquet(clean, tmp_path / "clean.parquet")
    io.write_parquet(inc, tmp_path / "inc.parquet")
    with pytest.raises(evaluate.EvaluationError, match="'i9'"):
        evaluate.imagenet_c_accuracy(
            {("m", "frost"): tmp_path / "inc.parquet"},
            {"m": tmp_path / "clean.parquet"},
            label_spaces=evaluate.IMAGENET_C_LABEL_SPACES,
        )
    with pytest.raises(evaluate.EvaluationError, match="no clean predictions"):
        evaluate.imagenet_c_accuracy(
            {("m", "frost"): tmp_path / "inc.parquet"},
            {},
            label_spaces=evaluate.IMAGENET_C_LABEL_SPACES,
        )
    # a model without 16-class decisions has no geirhos16 rows
    io.write_parquet(inc.iloc[:1], tmp_path / "inc1.parquet")
    out = evaluate.imagenet_c_accuracy(
        {("m", "frost"): tmp_path / "inc1.parquet"},
        {"m": tmp_path / "clean.parquet"},
        label_spaces=evaluate.IMAGENET_C_LABEL_SPACES,
    )
    assert set(out["label_space"]) == {"imagenet1k"}
