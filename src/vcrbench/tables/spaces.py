"""One label space per table row: R̂ beside HMRI/MRSI in the humans' 16 classes, the dataset's R̂
in its own columns (the paper's Table 3 implies one human area per corruption, so its R̂ is in the
humans' label space)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from vcrbench.vocab import HUMAN_LABEL_SPACE

#: R̂ and its interval, the columns :func:`merge_spaces` takes from one label space per row.
R_COLUMNS = tuple(f"R_{k}{s}" for k in ("a", "p") for s in ("", "_lo", "_hi"))


def space_column(column: str, space: str) -> str:
    """The name of R̂ column ``column`` (``R_a``, ``R_a_lo``, …) in label space ``space`` when it
    stands beside R̂ of another space: ``R_a_imagenet1k``, ``R_a_imagenet1k_lo``, …"""
    base, bound = (column[:-3], column[-3:]) if column.endswith(("_lo", "_hi")) else (column, "")
    return f"{base}_{space}{bound}"


def merge_spaces(metrics: pd.DataFrame, label_space: str) -> pd.DataFrame:
    """One row per model and corruption, with R̂ in the label space of the HMRI/MRSI beside it:
    HMRI/MRSI come from the human label space, and where a row has them its R̂ does too (the
    paper's Table 3: one human area per corruption); elsewhere R̂ is ``label_space``'s.
    ``label_space``'s R̂ is also kept as its own columns (:func:`space_column`) where it differs;
    ``R_label_space`` says which space ``R_a``/``R_p`` are in."""
    r_cols = [c for c in R_COLUMNS if c in metrics]
    base = metrics[metrics["label_space"] == label_space][["model", "corruption", *r_cols]]
    h_cols = [c for c in metrics if c.startswith(("HMRI_", "MRSI_"))]
    ref_cols = [c for c in ("human_reference", "reference_how") if c in metrics]
    human = metrics[metrics["label_space"] == HUMAN_LABEL_SPACE][
        ["model", "corruption", *r_cols, *h_cols, *ref_cols]
    ].rename(columns={c: f"{c}@human" for c in r_cols})
    out = base.merge(human, on=["model", "corruption"], how="left")
    main = [c for c in ("HMRI_a", "MRSI_a", "HMRI_p", "MRSI_p") if c in out]
    beside = out[main].notna().any(axis=1).to_numpy() if main else np.zeros(len(out), bool)
    beside = beside & (label_space != HUMAN_LABEL_SPACE)  # else R̂ is the humans' space already
    for c in r_cols:
        if beside.any():
            out[space_column(c, label_space)] = out[c]
        out[c] = np.where(beside, out[f"{c}@human"], out[c])
    out["R_label_space"] = np.where(beside, HUMAN_LABEL_SPACE, label_space)
    return out.drop(columns=[f"{c}@human" for c in r_cols])
