"""Table 1: the models of the run, with the paper's columns (model, architecture, training method)
and the run's own (family, source, parameter count, clean accuracy).

Architecture and training method are the model entry's ``architecture`` and ``training``
(``config/paper.yaml`` gives the paper's words for its 19 models). Without an ``architecture`` the
table names the network the inference job built (:func:`built_architecture`: its timm or
torchvision name, a timm pretrained tag left out); the training method without ``training`` is
decided by the plan (:func:`vcrbench.plan.models.training_method`: ``Supervised`` for the family
``supervised``, else empty). The parameter count is what the inference job counted on the model it
built (the ``parameters`` entry of the clean predictions' metadata,
:mod:`vcrbench.inference.run`); the clean accuracy is top-1 in the dataset's label space over the
labelled clean images of those predictions.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import pandas as pd

from vcrbench.files import io
from vcrbench.settings import TableSettings
from vcrbench.tables.format import DEFAULT, MISSING, Table, _round, fmt

#: Columns of ``table1_models.csv``: the paper's, in its order, then the run's own.
COLUMNS = [
    "model",
    "architecture",
    "training",
    "family",
    "source",
    "parameters",
    "clean_accuracy",
    "n_clean",
]


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


def built_architecture(path: str | os.PathLike) -> str:
    """The name of the network the inference job built, from its clean predictions' metadata
    (``model_info``): the timm or torchvision name (``tf_efficientnet_lite0``; a timm pretrained
    tag left out: ``resnet18`` for ``resnet18.fb_swsl_ig1b_ft_in1k``), the open_clip name, the
    torch.hub entry point; ``""`` where none is recorded."""
    info = io.read_metadata(path).get("model_info") or {}
    name = str(info.get("arch") or info.get("entry") or "")
    return name.split(".", 1)[0] if info.get("library") == "timm" else name


def table1_models(
    models: Mapping[str, Mapping[str, str]],
    clean: Mapping[str, str | os.PathLike],
    settings: TableSettings = DEFAULT,
) -> Table:
    """Table 1 from ``models`` (``{model: {"architecture", "training", "family", "source"}}``, in
    the run's order; an empty ``architecture`` is the built network's, :func:`built_architecture`)
    and each model's clean predictions (``{model: path}``); accuracies to ``settings.digits``
    decimals, parameters in millions to one."""
    digits = settings.digits
    rows = []
    for name, entry in models.items():
        accuracy, n = clean_accuracy(clean[name])
        rows.append(
            {
                "model": name,
                "architecture": str(entry.get("architecture") or built_architecture(clean[name])),
                "training": str(entry.get("training") or ""),
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
            "Architecture": [_text(v) for v in data["architecture"]],
            "Training method": [_text(v) for v in data["training"]],
            "Family": data["family"],
            "Source": data["source"],
            "Parameters (M)": [
                fmt(v / 1e6, 1) if pd.notna(v) else MISSING for v in data["parameters"]
            ],
            "Clean accuracy": [fmt(v, digits) for v in data["clean_accuracy"]],
        }
    )
    n_clean = sorted(set(data["n_clean"]))
    images = f"{n_clean[0]:,}" if len(n_clean) == 1 else "the labelled"
    caption = (
        "The models of this run: architecture and training method (the paper's columns), family, "
        "source of the weights, parameters counted on the built model, and top-1 accuracy on "
        f"{images} clean images."
    )
    return Table(_round(data, digits), display, caption, "tab:models")


def _text(value: str) -> str:
    return value if value else MISSING
