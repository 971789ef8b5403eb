"""Error consistency of two models on the same test samples, per Δv bin."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vcrbench.errors import LabelSpaceError
from vcrbench.evaluation import consistency
from vcrbench.files import io
from vcrbench.kappa import error_consistency
from vcrbench.vocab import decision_columns, resolve_label_spaces, table_label_space


def _predictions(path, correct, dv, label16=None):
    n = len(correct)
    label = np.arange(n) % 5
    label[0] = -1  # unlabelled: left out
    df = pd.DataFrame(
        {
            "sample_id": np.arange(n, dtype=np.int64),
            "dv": dv,
            "label": label,
            "pred": np.where(correct, label, label + 1).astype(np.int32),
            "label16": (label16 if label16 is not None else np.full(n, -1)).astype(np.int8),
            "pred16": np.zeros(n, dtype=np.int8),
        }
    )
    io.write_parquet(df, path)
    return str(path)


def test_pairs_per_bin_and_label_space(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    dv = rng.random(n)
    a = rng.random(n) < 0.7
    b = np.where(rng.random(n) < 0.8, a, ~a)  # agrees with a on ~80% of samples
    c = rng.random(n) < 0.5
    files = {
        "a": [_predictions(tmp_path / "a.parquet", a, dv)],
        "b": [_predictions(tmp_path / "b.parquet", b, dv)],
        "c": [_predictions(tmp_path / "c.parquet", c, dv)],
    }
    spaces = ["dataset", "geirhos16"]
    t = consistency.pair_consistency(files, corruption="x", n_bins=5, label_spaces=spaces)
    assert tuple(t.columns) == consistency.TABLE_COLUMNS
    # no 16-class labels: only imagenet1k; 3 pairs x 4 bins (bin 4 holds only dv = 1)
    assert set(t.label_space) == {"imagenet1k"} and len(t) == 3 * 4
    assert t.groupby(["model_a", "model_b"]).n.sum().tolist() == [n - 1] * 3
    ab = t[(t.model_a == "a") & (t.model_b == "b")]
    ac = t[(t.model_a == "a") & (t.model_b == "c")]
    assert (ab.kappa > 0.3).all() and (ac.kappa.abs() < 0.3).all()
    # one bin recomputed by hand
    row = ab.iloc[0]
    keep = (np.arange(n) > 0) & (np.floor(dv * 4) == row["bin"])
    ref = error_consistency(a[keep], b[keep])
    assert (row.n, row.kappa) == (ref["n"], pytest.approx(ref["kappa"]))
    out = consistency.write_consistency_table(
        {"x": files}, tmp_path / "t.csv", n_bins=5, label_spaces=spaces
    )
    assert pd.read_csv(tmp_path / "t.csv").shape == out.shape
    # min_shared leaves out the bins with fewer shared samples (the workflow keeps every bin)
    least = int(ab.n.min())
    fewer = consistency.pair_consistency(
        files, corruption="x", n_bins=5, label_spaces=spaces, min_shared=least + 1
    )
    assert len(fewer) < len(t) and (fewer.n > least).all()


def test_a_dataset_with_its_own_label_space_names_its_rows(tmp_path):
    # Models over a dataset's own classes (e.g. CUB's 200) make no 16-class decision (pred16 -1):
    # the rows carry the dataset's label space, never imagenet1k, and there are no geirhos16 rows.
    rng = np.random.default_rng(1)
    n = 200
    dv = rng.random(n)
    a = rng.random(n) < 0.6
    files = {
        m: [_predictions(tmp_path / f"{m}.parquet", correct, dv)]
        for m, correct in {"a": a, "b": np.where(rng.random(n) < 0.9, a, ~a)}.items()
    }
    for name in files:
        df = io.read_parquet(files[name][0])
        io.write_parquet(df.assign(pred16=np.int8(-1)), files[name][0])
    out = consistency.write_consistency_table(
        {"x": files},
        tmp_path / "t.csv",
        n_bins=5,
        dataset_label_space="cub200",
        label_spaces=["dataset", "geirhos16"],
    )
    assert set(out.label_space) == {"cub200"} and len(out) == 4
    assert set(pd.read_csv(tmp_path / "t.csv").label_space) == {"cub200"}
    assert out.n.sum() == n - 1
    # only the label spaces asked for; an unknown one is an error naming it
    only = consistency.pair_consistency(
        files, corruption="x", n_bins=5, dataset_label_space="cub200", label_spaces=["geirhos16"]
    )
    assert only.empty
    with pytest.raises(LabelSpaceError, match="label space 'imagenet1k' is neither"):
        consistency.pair_consistency(
            files,
            corruption="x",
            n_bins=5,
            dataset_label_space="cub200",
            label_spaces=["imagenet1k"],
        )


def test_the_resolver_gives_each_label_space_its_columns():
    assert decision_columns("dataset", "cub200") == ("pred", "label")
    assert decision_columns("cub200", "cub200") == ("pred", "label")
    assert decision_columns("geirhos16", "imagenet1k") == ("pred16", "label16")
    assert resolve_label_spaces(["dataset", "geirhos16", "imagenet1k"], "imagenet1k") == [
        "imagenet1k",
        "geirhos16",
    ]


def test_a_tables_dataset_label_space_is_the_first_that_is_not_the_human_one():
    assert table_label_space(["geirhos16", "cub200", "geirhos16"]) == "cub200"
    assert table_label_space(["imagenet1k", "geirhos16"]) == "imagenet1k"
    assert table_label_space(["geirhos16"]) == "geirhos16"
    assert table_label_space([]) == ""
