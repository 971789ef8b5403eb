"""Restricted analyses: clean-correct samples and the unseen-only decision."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from vcrbench.errors import EvaluationError
from vcrbench.files import io
from vcrbench.tables import restricted
from vcrbench.vocab import RESTRICTED_COLUMNS, RESTRICTED_CURVE_COLUMNS

SETTINGS = {"n_boot": 20, "label_spaces": ["dataset"], "min_count": 5}


def frames(n_images=300, seed=0):
    """4 classes; images of class 0 and 2 are right when clean, 1 and 3 wrong. A clean-correct
    image stays right below Δv = 0.5 and goes wrong above; a clean-wrong one stays wrong."""
    rng = np.random.default_rng(seed)
    labels = np.arange(n_images) % 4
    ids = np.array([f"img{i:04d}" for i in range(n_images)])
    clean_pred = np.where(labels % 2 == 0, labels, (labels + 1) % 4)
    clean = pd.DataFrame({"sample_id": np.arange(n_images), "image_id": ids, "label": labels,
                          "dv": 0.0, "pred": clean_pred})  # fmt: skip
    rep = np.repeat(np.arange(n_images), 4)
    dv = rng.uniform(0, 1, len(rep))
    right = (labels[rep] % 2 == 0) & (dv < 0.5)
    preds = pd.DataFrame({"sample_id": np.arange(len(rep)), "image_id": ids[rep],
                          "label": labels[rep], "dv": dv,
                          "pred": np.where(right, labels[rep], (labels[rep] + 1) % 4)})  # fmt: skip
    return preds, clean


def test_clean_correct_keeps_only_samples_of_clean_correct_images():
    preds, clean = frames()
    rows, curves = restricted.clean_correct(
        preds, clean, model="m", corruption="frost", settings=SETTINGS, seed=1,
        dataset_label_space="toy", label_spaces=["dataset"],
        zero_shot={"seen": [0, 1], "unseen": [2, 3]},
    )  # fmt: skip
    table = pd.DataFrame(rows).set_index("property")
    acc = table.loc["accuracy"]
    assert acc["n_samples"] == (preds["label"] % 2 == 0).sum()  # classes 0 and 2 only
    assert acc["n_images"] == 150
    assert acc["clean_accuracy"] == 1.0
    assert acc["R"] == pytest.approx(0.5, abs=0.05)  # right up to Δv = 0.5, wrong after
    assert acc["R_lo"] <= acc["R"] <= acc["R_hi"]
    # the zero-shot properties on the same samples: classes 1 and 3 have none left
    assert {"class_mean_accuracy", "seen_accuracy", "unseen_accuracy"} <= set(table.index)
    assert table.loc["seen_accuracy", "n_samples"] == (preds["label"] == 0).sum()
    curve = pd.concat(curves)
    assert list(curve.columns) == RESTRICTED_CURVE_COLUMNS
    at0 = curve[(curve["property"] == "accuracy") & (curve["v"] == 0)]["value"]
    assert at0.iloc[0] == pytest.approx(1.0)


def test_unseen_only_decision_picks_among_unseen_classes():
    lp = np.log(np.array([[0.6, 0.3, 0.1], [0.5, 0.25, 0.25], [0.9, 0.02, 0.08]]))
    assert restricted.unseen_only_decision(lp, [2, 1]).tolist() == [1, 1, 2]  # tie: lower index
    with pytest.raises(EvaluationError, match="no unseen class"):
        restricted.unseen_only_decision(lp, [])
    with pytest.raises(EvaluationError, match=r"class indices must lie in \[0, 3\)"):
        restricted.unseen_only_decision(lp, [3])


def write_predictions(frame, logprobs, path):
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if logprobs is not None:
        flat = pa.array(logprobs.astype(np.float16).reshape(-1), pa.float16())
        table = table.append_column(
            "logprobs", pa.FixedSizeListArray.from_arrays(flat, logprobs.shape[1])
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def test_unseen_only_accuracy_from_saved_logprobs(tmp_path):
    """Images of unseen class 2 or 3: the model's top class is seen class 0 (so its GZSL
    accuracy is 0), its second the right one: the unseen-only decision is always right."""
    preds, clean = frames(n_images=200)

    def logprobs(labels):
        p = np.full((len(labels), 4), 0.05)
        p[:, 0] = 0.7
        p[np.arange(len(labels)), labels] = np.where(labels == 0, 0.85, 0.2)
        return np.log(p / p.sum(axis=1, keepdims=True))

    preds["pred"] = 0
    clean["pred"] = 0
    files = [
        write_predictions(preds.iloc[:400], logprobs(preds["label"].to_numpy()[:400]),
                          tmp_path / "g0.parquet"),
        write_predictions(preds.iloc[400:], logprobs(preds["label"].to_numpy()[400:]),
                          tmp_path / "g1.parquet"),
    ]  # fmt: skip
    clean_file = write_predictions(
        clean, logprobs(clean["label"].to_numpy()), tmp_path / "c.parquet"
    )
    table, curves = restricted.write_restricted_tables(
        restricted.unseen_only, [("m", "frost", files)], {"m": clean_file},
        tmp_path / "t.csv", tmp_path / "c.csv", unseen=[2, 3], settings=SETTINGS, seed=0,
        dataset_label_space="toy",
    )  # fmt: skip
    assert list(table.columns) == RESTRICTED_COLUMNS
    row = table.iloc[0]
    assert row["property"] == "unseen_only_accuracy"
    assert row["n_samples"] == preds["label"].isin([2, 3]).sum()
    assert row["clean_accuracy"] == 1.0 and row["R"] == pytest.approx(1.0)
    assert pd.read_csv(tmp_path / "c.csv")["value"].min() == pytest.approx(1.0)
    # without saved log-probabilities: an error that names the config key
    bare = write_predictions(preds, None, tmp_path / "bare.parquet")
    with pytest.raises(EvaluationError, match="inference.save_logprobs"):
        restricted.unseen_only(
            [bare], clean_file, model="m", corruption="frost", unseen=[2, 3], settings=SETTINGS,
            seed=0, dataset_label_space="toy",
        )  # fmt: skip


def test_logprobs_column_name_is_the_inference_one():
    from vcrbench.inference.outputs import LOGPROBS

    assert restricted.LOGPROBS == LOGPROBS


def test_clean_correct_job_reads_files(tmp_path):
    preds, clean = frames(n_images=120)
    io.write_parquet(preds, tmp_path / "p.parquet")
    io.write_parquet(clean, tmp_path / "c.parquet")
    table, _ = restricted.write_restricted_tables(
        restricted.clean_correct_job, [("m", "frost", [tmp_path / "p.parquet"])],
        {"m": tmp_path / "c.parquet"}, tmp_path / "t.csv", tmp_path / "cc.csv",
        settings=SETTINGS, seed=0, dataset_label_space="toy", label_spaces=["dataset"],
    )  # fmt: skip
    assert table["property"].tolist() == ["accuracy"]
    assert pd.read_csv(tmp_path / "t.csv")["n_images"].tolist() == [60]


def test_a_subset_too_small_for_the_bins_gives_an_empty_row():
    preds, clean = frames(n_images=40)
    rows, curves = restricted.clean_correct(
        preds, clean, model="m", corruption="frost", settings={**SETTINGS, "min_count": 500},
        seed=0, dataset_label_space="toy", label_spaces=["dataset"],
        zero_shot={"seen": [0, 1], "unseen": [2, 3]},
    )  # fmt: skip
    assert len(rows) == 1 and not curves
    assert rows[0]["n_samples"] == 80 and np.isnan(rows[0]["R"])


def test_unseen_classes_need_a_split():
    assert restricted.unseen_classes({"seen": [0], "unseen": [2, 1]}) == [2, 1]
    for split in (None, {"seen": None, "unseen": None}):
        with pytest.raises(EvaluationError, match="dataset.zero_shot"):
            restricted.unseen_classes(split)


def test_imagenet_c_clean_correct_counts_only_clean_correct_images(tmp_path):
    def frame(ids, labels, preds, severity=None):
        df = pd.DataFrame({"sample_id": np.arange(len(ids)), "image_id": ids, "label": labels,
                           "dv": 0.0, "pred": preds, "prob_label": 0.5, "pred16": -1,
                           "label16": -1})  # fmt: skip
        if severity is not None:
            df["severity"] = severity
        return df

    # i0, i1 right when clean, i2 wrong, i3 unlabelled
    clean = frame(["i0", "i1", "i2", "i3"], [1, 2, 3, -1], [1, 2, 0, 5])
    inc = frame(
        ["i0", "i1", "i2", "i3"] * 2, [1, 2, 3, -1] * 2,
        [1, 0, 3, 5, 0, 0, 3, 5],  # severity 1: i0 right, i1 wrong; severity 2: both wrong
        severity=np.repeat([1, 2], 4),
    )  # fmt: skip
    io.write_parquet(clean, tmp_path / "clean.parquet")
    io.write_parquet(inc, tmp_path / "inc.parquet")
    out = restricted.imagenet_c_clean_correct(
        {("m", "frost"): [tmp_path / "inc.parquet"]},
        {"m": tmp_path / "clean.parquet"},
        label_spaces=["dataset", "geirhos16"],
    )
    mine = out[out["label_space"] == "imagenet1k"].set_index("severity")
    assert mine.loc["1", "accuracy"] == 0.5 and mine.loc["1", "n"] == 2  # i2 (now right) left out
    assert mine.loc["2", "accuracy"] == 0.0
    assert mine.loc["mean", "accuracy"] == 0.25 and mine.loc["mean", "n"] == 4
    assert (out["consistency"] == out["accuracy"]).all()
    assert set(out["label_space"]) == {"imagenet1k"}  # no 16-class decisions
