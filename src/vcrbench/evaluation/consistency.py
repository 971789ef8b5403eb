"""Error consistency of two models on the workflow's own test sets, per Δv bin.

Geirhos, Meding & Wichmann (NeurIPS 2020): Cohen's κ = (c_obs − c_exp) / (1 − c_exp) of "both
right or both wrong" beyond what the two accuracies predict
(:func:`vcrbench.kappa.error_consistency`). Every model of a run answers the same
test samples (same ``sample_id``, same pixels), so each pair of models is compared on all shared
labelled samples, per bin of Alg. 1 (``j = ⌊Δv (M − 1)⌋``); ``n`` is the number of shared
samples each value rests on. Label spaces are those of ``estimation.label_spaces`` (the
dataset's own, under its name, and the 16 human classes where the models decide in them), their
columns from :func:`vcrbench.vocab.decision_columns`.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from vcrbench.bins import bin_index
from vcrbench.files import io
from vcrbench.kappa import error_consistency
from vcrbench.vocab import (
    IMAGENET1K,
    MODEL_CONSISTENCY_COLUMNS,
    decision_columns,
    resolve_label_spaces,
)

#: Columns of ``model_error_consistency.csv`` (:data:`vcrbench.vocab.MODEL_CONSISTENCY_COLUMNS`).
TABLE_COLUMNS = MODEL_CONSISTENCY_COLUMNS


def _correct(paths: Sequence[str | os.PathLike], space: str, dataset_label_space: str):
    pred, label = decision_columns(space, dataset_label_space)
    columns = ["sample_id", "dv", pred, label]
    df = pd.concat([io.read_parquet(p, columns=columns) for p in paths], ignore_index=True)
    df = df[(df[label] >= 0) & (df[pred] >= 0)]
    return pd.DataFrame(
        {"sample_id": df["sample_id"], "dv": df["dv"], "correct": df[pred] == df[label]}
    )


def pair_consistency(
    predictions: Mapping[str, Sequence[str | os.PathLike]],
    *,
    corruption: str,
    n_bins: int,
    label_spaces: Sequence[str],
    dataset_label_space: str = IMAGENET1K,
    min_shared: int = 1,
) -> pd.DataFrame:
    """κ of every pair of models (``{model: its prediction files of one corruption}``) per bin.

    ``n_bins``: Alg. 1's bins (``estimation.bins``); ``label_spaces``: as
    ``estimation.label_spaces`` (``"dataset"`` is ``dataset_label_space``, the name the rows
    carry). Bins with fewer than ``min_shared`` shared samples are left out (no config key: the
    workflow keeps every bin; not the estimator's ``estimation.min_count``). Columns
    :data:`TABLE_COLUMNS`.
    """
    rows = []
    for space in resolve_label_spaces(label_spaces, dataset_label_space):
        correct = {
            m: _correct(p, space, dataset_label_space) for m, p in sorted(predictions.items())
        }
        for a, b in itertools.combinations(sorted(correct), 2):
            both = correct[a].merge(correct[b], on="sample_id", suffixes=("_a", "_b"))
            if both.empty:
                continue
            both["bin"] = bin_index(both["dv_a"].to_numpy(), n_bins)
            for j, g in both.groupby("bin", sort=True):
                if len(g) < min_shared:
                    continue
                r = error_consistency(g["correct_a"].to_numpy(), g["correct_b"].to_numpy())
                rows.append(
                    {
                        "corruption": corruption, "label_space": space, "model_a": a,
                        "model_b": b, "bin": int(j), "v_lo": j / (n_bins - 1),
                        "v_hi": min(1.0, (j + 1) / (n_bins - 1)), "n": r["n"], "p_a": r["p_a"],
                        "p_b": r["p_b"], "c_obs": r["c_obs"], "c_exp": r["c_exp"],
                        "kappa": r["kappa"],
                    }
                )  # fmt: skip
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


def write_consistency_table(
    predictions: Mapping[str, Mapping[str, Sequence[str | os.PathLike]]],
    out_path: str | os.PathLike,
    *,
    n_bins: int,
    label_spaces: Sequence[str],
    dataset_label_space: str = IMAGENET1K,
    min_shared: int = 1,
) -> pd.DataFrame:
    """:func:`pair_consistency` of every corruption (``{corruption: {model: files}}``), one CSV."""
    frames = [
        pair_consistency(
            files, corruption=c, n_bins=n_bins, min_shared=min_shared,
            dataset_label_space=dataset_label_space, label_spaces=label_spaces,
        )
        for c, files in sorted(predictions.items())
    ]  # fmt: skip
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=TABLE_COLUMNS)
    out["n"] = out["n"].astype(np.int64)
    io.write_csv(out, out_path)
    return out
