"""A label space short of samples (issue 39): its rows say so, the job's other label spaces are
estimated as usual, the tables and figures that show it say so; estimation.short_label_space:
error makes it a failure."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

from vcrbench import estimation, schema
from vcrbench.errors import EvaluationError, ShortSampleError
from vcrbench.estimation.status import SHORT_LABEL_SPACE
from vcrbench.evaluation import evaluate
from vcrbench.figures.bars import hmri_mrsi_figure
from vcrbench.figures.curves import curves_figure
from vcrbench.figures.scatter import imagenet_c_scatter_figure
from vcrbench.figures.style import Style
from vcrbench.files import io
from vcrbench.plan import config as plan_config
from vcrbench.settings import EstimationSettings, TableSettings
from vcrbench.tables import paper
from vcrbench.vocab import STATUS_OK, STATUS_SHORT

from ..support import figure_checks

#: 10 images; only "i0" is in the 16 classes (label 0 -> 16-class 0).
IMAGES = [f"i{k}" for k in range(10)]
LABELS = list(range(10))
LABEL16 = [0] + [-1] * 9
SETTINGS = {"bins": 40, "min_count": 5, "n_boot": 10, "level": 0.95}


def _clean() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "sample_id": np.arange(10),
            "image_id": IMAGES,
            "label": LABELS,
            "dv": 0.0,
            "pred": np.array(LABELS, dtype=np.int32),
            "prob_label": np.float32(0.5),
            "pred16": np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], dtype=np.int8),
            "label16": np.array(LABEL16, dtype=np.int8),
        }
    )


def _run(tmp_path, n=1200, n16=20, seed=3):
    """``n`` samples with Δv uniform; ``n16`` of them show image i0 (the 16-class one): at
    min_count 5 over 40 bins the 16-class accuracy is short, everything else is not."""
    rng = np.random.default_rng(seed)
    image = np.r_[np.zeros(n16, dtype=int), rng.integers(1, 10, n - n16)]
    dv = rng.random(n)
    keep = rng.random(n) > dv
    clean = _clean()
    preds = pd.DataFrame(
        {
            "sample_id": np.arange(n),
            "image_id": np.array(IMAGES)[image],
            "label": np.array(LABELS)[image],
            "dv": dv,
            "pred": np.where(keep, np.array(LABELS)[image], 999).astype(np.int32),
            "prob_label": np.float32(0.5),
            "pred16": np.where(keep, clean["pred16"].to_numpy()[image], 11).astype(np.int8),
            "label16": np.array(LABEL16, dtype=np.int8)[image],
        }
    )
    io.write_parquet(preds, tmp_path / "g0.parquet")
    io.write_parquet(clean, tmp_path / "clean.parquet")
    return [tmp_path / "g0.parquet"], tmp_path / "clean.parquet"


def _evaluate(tmp_path, out="out", **kwargs):
    paths, clean = _run(tmp_path)
    return evaluate.evaluate(
        paths, clean, tmp_path / out, model="m", corruption="gaussian_noise",
        settings=SETTINGS, seed=0, label_spaces=["dataset", "geirhos16"], scenario_level=0.95,
        **{"short_label_space": "status", **kwargs},
    )  # fmt: skip


def test_the_error_is_a_value_error_with_its_counts_and_pickles():
    exc = ShortSampleError(20, 11, 207)
    assert isinstance(exc, ValueError)
    assert str(exc) == (
        "no Δv bin holds at least min_count=20 samples (largest bin: 11 of 207 samples); "
        "lower estimation.min_count or add samples"
    )
    again = pickle.loads(pickle.dumps(exc))
    assert (again.min_count, again.largest, again.n_samples) == (20, 11, 207)
    with pytest.raises(ShortSampleError, match="largest bin: 1 of 3"):
        estimation.fit_curve(
            [0.1, 0.5, 0.9], [1, 0, 1], 1.0, EstimationSettings(min_count=5), seed=0
        )


def test_a_short_label_space_leaves_the_others_estimated(tmp_path):
    table = _evaluate(tmp_path).set_index("label_space")
    ok, short = table.loc["imagenet1k"], table.loc["geirhos16"]
    assert ok["status"] == STATUS_OK and ok["status_reason"] == ""
    assert 0 < ok["R_a"] < 1 and 0 < ok["R_p"] < 1
    assert short["status"] == STATUS_SHORT
    assert short["status_reason"].startswith("accuracy: no Δv bin holds at least min_count=5")
    assert "of 20 samples" in short["status_reason"]
    assert np.isnan(short["R_a"]) and np.isnan(short["R_a_lo"]) and np.isnan(short["R_a_hi"])
    assert 0 < short["R_p"] < 1  # consistency counts every sample: enough
    curves = io.read_parquet(tmp_path / "out" / "curves.parquet")
    drawn = set(zip(curves["label_space"], curves["property"], strict=True))
    assert drawn == {
        ("imagenet1k", "accuracy"), ("imagenet1k", "consistency"), ("geirhos16", "consistency"),
    }  # fmt: skip
    # the metrics table: every row has a status
    collected = evaluate.collect_metrics([tmp_path / "out" / "metrics.parquet"], tmp_path / "t.csv")
    assert list(collected.columns) == evaluate.METRIC_COLUMNS
    back = pd.read_csv(tmp_path / "t.csv", keep_default_na=False)
    assert sorted(back["status"]) == [STATUS_OK, STATUS_SHORT]


def test_the_estimates_match_those_of_a_run_without_the_short_label_space(tmp_path):
    both = _evaluate(tmp_path, "both").set_index("label_space")
    paths, clean = _run(tmp_path)
    only = evaluate.evaluate(
        paths, clean, tmp_path / "only", model="m", corruption="gaussian_noise",
        settings=SETTINGS, seed=0, label_spaces=["dataset"], scenario_level=0.95,
        short_label_space="status",
    ).set_index("label_space")  # fmt: skip
    for col in ("R_a", "R_a_lo", "R_a_hi", "R_p", "R_p_lo", "R_p_hi"):
        assert both.loc["imagenet1k", col] == only.loc["imagenet1k", col]
    assert "status" not in only.columns  # a job without a short row writes what it wrote


def test_short_label_space_error_fails_the_job_naming_the_label_space(tmp_path):
    with pytest.raises(EvaluationError, match="label space 'geirhos16', accuracy: no Δv bin"):
        _evaluate(tmp_path, short_label_space="error")
    with pytest.raises(EvaluationError, match="short_label_space must be one of status, error"):
        _evaluate(tmp_path, short_label_space="skip")


def test_nothing_estimated_is_an_error(tmp_path):
    paths, clean = _run(tmp_path)
    with pytest.raises(EvaluationError, match="nothing could be estimated: accuracy: no Δv bin"):
        evaluate.evaluate(
            paths, clean, tmp_path / "out", model="m", corruption="c",
            settings={**SETTINGS, "min_count": 10_000}, seed=0, label_spaces=["geirhos16"],
            scenario_level=0.95, short_label_space="status",
        )  # fmt: skip


def test_the_switch_is_in_the_schema_and_left_out_of_params_at_its_default():
    node = schema.schema()["properties"]["estimation"]["properties"]["short_label_space"]
    assert tuple(node["enum"]) == SHORT_LABEL_SPACE
    config = {"estimation": {"bins": 40, "short_label_space": "status", "min_count": 3}}
    assert plan_config.params_section(config, "estimation") == {"bins": 40, "min_count": 3}
    config["estimation"]["short_label_space"] = "error"
    assert plan_config.params_section(config, "estimation")["short_label_space"] == "error"


def _metrics_with_short_row() -> pd.DataFrame:
    rows = []
    for model in ("m1", "m2"):
        for space in ("imagenet1k", "geirhos16"):
            row = {"model": model, "corruption": "gaussian_noise", "label_space": space}
            for m in ("R_a", "R_p", "HMRI_a", "MRSI_a", "HMRI_p", "MRSI_p"):
                v = np.nan if space == "imagenet1k" and m[0] in "HM" else 0.5
                row.update({m: v, f"{m}_lo": v, f"{m}_hi": v})
            row.update(human_reference="ref", reference_how="own", status=STATUS_OK)
            row["status_reason"] = ""
            if space == "geirhos16":
                for m in ("R_a", "HMRI_a", "MRSI_a"):
                    row.update({m: np.nan, f"{m}_lo": np.nan, f"{m}_hi": np.nan})
                row["status"] = STATUS_SHORT
                row["status_reason"] = "accuracy: no Δv bin holds at least min_count=20 samples"
            rows.append(row)
    return pd.DataFrame(rows)


def test_the_paper_tables_say_which_rows_are_short():
    metrics = _metrics_with_short_row()
    table = paper.metrics_table(metrics)
    assert list(table.data["status"]) == [STATUS_SHORT, STATUS_OK] * 2
    assert table.display["Status"].tolist()[0].startswith("accuracy: no Δv bin")
    assert "Too few samples" in table.caption
    board = paper.leaderboard(
        metrics, "gaussian_noise", settings=TableSettings(label_space="imagenet1k")
    )
    assert "m1, geirhos16: accuracy: no Δv bin" in board.caption
    # a table without short rows is as before: no status column, no note
    fine = paper.metrics_table(metrics.assign(status=STATUS_OK, status_reason=""))
    assert "status" not in fine.data and "Status" not in fine.display
    assert "Too few samples" not in fine.caption


def test_figures_of_a_short_label_space_say_so():
    metrics = _metrics_with_short_row()
    style = Style()
    with style.context():
        bars = hmri_mrsi_figure(metrics, "gaussian_noise", {}, style)
        texts = " ".join(t.get_text() for t in figure_checks.drawn_texts(bars))
        assert "too few samples for the accuracy curve" in texts
        v = np.linspace(0, 1, 11)
        curves = pd.DataFrame(
            {"model": "m1", "label_space": "geirhos16", "property": "consistency", "v": v,
             "s": 1 - v, "lo": 1 - v, "hi": 1 - v}
        )  # fmt: skip
        fig = curves_figure(curves, {}, style, corruption="gaussian_noise", label_space="geirhos16")
        texts = " ".join(t.get_text().replace("\n", " ") for t in figure_checks.drawn_texts(fig))
        assert "no model curve $s_a$ in this label space: too few samples for a curve" in texts
        texts = figure_checks.drawn_texts(fig)
        assert not figure_checks.overlapping_pairs(figure_checks.text_bboxes(fig, texts))


def test_the_imagenet_c_scatter_of_a_short_label_space_says_so():
    """R̂_a of the 16 classes empty for every model: the panel says why instead of failing."""
    metrics = _metrics_with_short_row()
    inc = pd.DataFrame(
        {"model": ["m1", "m2"], "corruption": "gaussian_noise", "label_space": "geirhos16",
         "severity": "mean", "accuracy": [0.4, 0.6]}
    )  # fmt: skip
    style = Style()
    with style.context():
        fig = imagenet_c_scatter_figure(
            inc, metrics, "gaussian_noise", {}, style, label_space="geirhos16"
        )
        texts = " ".join(t.get_text() for t in figure_checks.drawn_texts(fig))
    assert "too few samples for a curve" in texts
