"""Table 1: the models of the run, with their family, source, parameter count and clean accuracy.

The parameter count is what the inference job counted on the model it built (the ``parameters``
entry of the clean predictions' metadata, :mod:`vcrbench.inference.run`); the clean accuracy is
top-1 in the dataset's label space over the labelled clean images of those predictions.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
import pandas as pd

from vcrbench import io
from vcrbench.tables.format import Table, _round, fmt

#: Columns of ``table1_models.csv``.
COLUMNS = ["model", "family", "source", "parameters", "clean_accuracy", "n_clean"]


def clean_accuracy(path: str | os.PathLike) -> tuple[float, int]:
    """``(top-1 accuracy, labelled images)`` of one clean prediction file (NaN, 0 without
    labelled images)."""
    df = io.read_columns(path, ["pred", "label"])
    labelled = df[df["label"] >= 0]
    if labelled.empty:
        return float("nan"), 0
    return float((labelled["pred"] == labelled["label"]).mean()), len(labelled)


def parameter_count(path: str | os.PathLike) -> float:
    """The model's parameter count recorded in its clean predictions (NaN where none is)."""
    value = io.read_metadata(path).get("parameters")
    return float("nan") if value is None else float(value)


def table1_models(
    models: Mapping[str, Mapping[str, str]],
    clean: Mapping[str, str | os.PathLike],
    digits: int = 3,
) -> Table:
    """Table 1 from ``models`` (``{model: {"family", "source"}}``, in the run's order) and each
    model's clean predictions (``{model: path}``)."""
    rows = []
    for name, entry in models.items():
        accuracy, n = clean_accuracy(clean[name])
        rows.append(
            {
                "model": name,
                "family": str(entry["family"]),
                "source": str(entry["source"]),
                "parameters": parameter_count(clean[name]),
                "clean_accuracy": accuracy,
                "n_clean": n,
            }
        )
    data = pd.DataFrame(rows, columns=COLUMNS)
    data["parameters"] = data["parameters"].astype("Int64")
    display = pd.DataFrame(
        {
            "Model": data["model"],
            "Family": data["family"],
            "Source": data["source"],
            "Parameters (M)": [
                fmt(v / 1e6, 1) if pd.notna(v) else fmt(np.nan) for v in data["parameters"]
            ],
            "Clean accuracy": [fmt(v, digits) for v in data["clean_accuracy"]],
        }
    )
    n_clean = sorted(set(data["n_clean"]))
    images = f"{n_clean[0]:,}" if len(n_clean) == 1 else "the labelled"
    caption = (
        "The models of this run: family, source of the weights, parameters counted on the built "
        f"model, and top-1 accuracy on {images} clean images."
    )
    return Table(_round(data, digits), display, caption, "tab:models")
