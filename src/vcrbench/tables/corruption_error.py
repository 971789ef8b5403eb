"""ImageNet-C's corruption error (CE), mCE and relative mCE, and means by corruption category.

Hendrycks & Dietterich (2019) normalise a model's top-1 error E^f_{s,c} on corruption c at severity
s by AlexNet's:

- ``CE_c = Σ_s E^f_{s,c} / Σ_s E^AlexNet_{s,c}``;
- ``relative CE_c = Σ_s (E^f_{s,c} − E^f_clean) / Σ_s (E^AlexNet_{s,c} − E^AlexNet_clean)``;
- mCE and relative mCE are their means over the 15 benchmark corruptions
  (:data:`~vcrbench.vocab.IMAGENET_C_BENCHMARK`).

AlexNet's errors ship in ``vcrbench/data/imagenet_c_alexnet.csv`` (with their source). Values are
ratios (AlexNet = 1; papers print them ×100). They exist only in ImageNet-1k's label space and for
the 15 benchmark corruptions: a run's other corruptions (e.g. Gaussian blur, one of ImageNet-C's
held-out four) get no CE. A run with fewer than the 15 reports a ``partial mCE`` row that names
the missing corruptions, never an ``mCE`` row.

Categories (noise, blur, weather, digital, and ``other``: :func:`category`, the one a corruption
is registered with) aggregate as Yucel et al.'s zero-shot study reports them: the mean over the
category's corruptions of a per-corruption value, for CE here and for ImageNet-C accuracy and the
VCR metrics in :func:`category_table`. That study's own quantity, its "ratio of reduction", is there
too (:data:`ZSL_RATIO`, :data:`ZSL_DEFENSE_RATIO`): per cent of the clean accuracy, averaged over
the category's corruptions and the five severities.
"""

from __future__ import annotations

import importlib.resources
import os
from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np
import pandas as pd

from vcrbench.corruptions import registered_category
from vcrbench.errors import TableError
from vcrbench.files import io
from vcrbench.vocab import (
    CATEGORY_COLUMNS,
    CORRUPTION_CATEGORIES,
    IMAGENET1K,
    IMAGENET_C_BENCHMARK,
    IMAGENET_C_BENCHMARK_CATEGORY,
    IMAGENET_C_MCE_COLUMNS,
    OTHER_CATEGORY,
    ZERO_SHOT_PROPERTIES,
)

ALEXNET_FILE = "imagenet_c_alexnet.csv"
SEVERITIES = (1, 2, 3, 4, 5)
#: Metrics of the VCR metrics table that :func:`category_table` averages, where present.
VCR_CATEGORY_METRICS = (
    "R_a", "R_p", "HMRI_a", "MRSI_a", "HMRI_p", "MRSI_p",
    *(f"R_{key}" for key in ZERO_SHOT_PROPERTIES),
)  # fmt: skip
#: Metrics of the ImageNet-C accuracy table (its severity-mean rows) that it averages.
IMAGENET_C_CATEGORY_METRICS = ("accuracy", "consistency")
#: Yucel et al.'s ratio of reduction: 100 · (clean accuracy − corrupted accuracy) / clean accuracy,
#: averaged over a category's corruptions and severities (positive: accuracy lost).
ZSL_RATIO = "zsl_ratio_of_reduction"
#: Its defense version: 100 · (undefended − defended corrupted accuracy) / undefended clean
#: accuracy, averaged the same way (positive: accuracy the defense loses, as the name says).
ZSL_DEFENSE_RATIO = "zsl_defense_ratio_of_reduction"


def category(corruption: str) -> str:
    """The corruption's category (noise, blur, weather, digital), else ``"other"``: the one it is
    registered with, else ImageNet-C's for a benchmark corruption that is not registered
    (:data:`~vcrbench.vocab.IMAGENET_C_BENCHMARK_CATEGORY`)."""
    registered = registered_category(corruption)
    if registered is not None:
        return registered
    return IMAGENET_C_BENCHMARK_CATEGORY.get(corruption, OTHER_CATEGORY)


@lru_cache(maxsize=1)
def alexnet_errors() -> tuple[pd.DataFrame, float]:
    """AlexNet's ImageNet-C errors (``corruption, severity, error``; the 15 benchmark
    corruptions x 5 severities) and its clean error."""
    ref = importlib.resources.files("vcrbench") / "data" / ALEXNET_FILE
    with ref.open() as fh:
        table = pd.read_csv(fh, comment="#")
    clean = table[table["corruption"] == "clean"]
    if len(clean) != 1:
        raise TableError(f"{ALEXNET_FILE}: needs exactly one 'clean' row, has {len(clean)}")
    per = table[table["corruption"] != "clean"].reset_index(drop=True)
    return per, float(clean["error"].iloc[0])


def clean_errors(
    clean: Mapping[str, str | os.PathLike], image_ids: Mapping[str, Sequence[str]]
) -> dict[str, float]:
    """Each model's top-1 error on its clean predictions (ImageNet-1k), over the labelled images
    among ``image_ids`` (those of its ImageNet-C sets, so that clean and corrupted errors are on
    the same images)."""
    out = {}
    for model, ids in sorted(image_ids.items()):
        if model not in clean:
            raise TableError(f"mCE: no clean predictions for model {model!r}")
        frame = io.read_columns(clean[model], ["image_id", "label", "pred"])
        frame = frame.drop_duplicates("image_id")
        frame = frame[frame["image_id"].isin(set(ids)) & (frame["label"] >= 0)]
        if frame.empty:
            raise TableError(
                f"mCE: model {model!r} has no labelled clean prediction of its ImageNet-C images"
            )
        out[model] = float((frame["pred"] != frame["label"]).mean())
    return out


def _severity_accuracies(rows: pd.DataFrame) -> tuple[dict[int, float], np.ndarray | None]:
    """The accuracy table's rows of one model, label space and corruption as ``({severity:
    accuracy}, accuracies at severities 1..5)``; the array is None unless all five exist (the
    ``mean`` row is skipped)."""
    rows = rows[rows["severity"].astype(str) != "mean"]
    by_sev = dict(zip(rows["severity"].astype(int), rows["accuracy"].astype(float), strict=True))
    if sorted(by_sev) != list(SEVERITIES):
        return by_sev, None
    return by_sev, np.array([by_sev[s] for s in SEVERITIES])


def _errors(accuracy: pd.DataFrame, model: str, corruption: str) -> np.ndarray:
    """E_{s,c} for s = 1..5 from the accuracy table's rows of one model and corruption."""
    rows = accuracy[(accuracy["model"] == model) & (accuracy["corruption"] == corruption)]
    by_sev, acc = _severity_accuracies(rows)
    if acc is None or np.isnan(acc).any():
        raise TableError(
            f"mCE: {model!r} on {corruption!r} needs an accuracy at each severity {SEVERITIES}, "
            f"has {sorted(by_sev)}"
        )
    return 1.0 - acc


def _mean_row(model, row, corruption, cat, rows, missing) -> dict:
    keys = ("error", "clean_error", "alexnet_error", "alexnet_clean_error", "CE", "relative_CE")
    out = {k: float(np.mean([r[k] for r in rows])) for k in keys}
    return {"model": model, "row": row, "corruption": corruption, "category": cat,
            "n_corruptions": len(rows), "missing": ";".join(missing), **out}  # fmt: skip


def mce_table(accuracy: pd.DataFrame, clean_error: Mapping[str, float]) -> pd.DataFrame:
    """CE and relative CE per model and benchmark corruption, their means per category, and mCE
    (:data:`~vcrbench.vocab.IMAGENET_C_MCE_COLUMNS`).

    ``accuracy``: the ImageNet-C accuracy table
    (:func:`vcrbench.evaluation.evaluate.imagenet_c_accuracy`; its ImageNet-1k rows are used);
    ``clean_error``: each model's clean top-1 error on the same images. Rows: ``row = "corruption"``
    (one per benchmark corruption the run has), ``"category"`` (mean over the category's corruptions
    the run has; ``missing`` names the others) and one ``"mCE"`` row, or ``"partial mCE"`` with
    ``missing`` when the run lacks some of the 15.
    """
    alex, alex_clean = alexnet_errors()
    alex_sev = {
        c: g.sort_values("severity")["error"].to_numpy() for c, g in alex.groupby("corruption")
    }
    acc = accuracy[accuracy["label_space"] == IMAGENET1K]
    rows: list[dict] = []
    for model in sorted(acc["model"].unique()):
        if model not in clean_error:
            raise TableError(f"mCE: no clean error for model {model!r}")
        e_clean = float(clean_error[model])
        have = set(acc.loc[acc["model"] == model, "corruption"])
        per: dict[str, dict] = {}
        for c in IMAGENET_C_BENCHMARK:
            if c not in have:
                continue
            e, a = _errors(acc, model, c), alex_sev[c]
            per[c] = {"model": model, "row": "corruption", "corruption": c,
                      "category": category(c), "n_corruptions": 1, "missing": "",
                      "error": float(e.mean()), "clean_error": e_clean,
                      "alexnet_error": float(a.mean()), "alexnet_clean_error": alex_clean,
                      "CE": float(e.sum() / a.sum()),
                      "relative_CE": float((e - e_clean).sum() / (a - alex_clean).sum())}  # fmt: skip
        if not per:
            continue
        rows += per.values()
        for cat in CORRUPTION_CATEGORIES:
            members = [c for c in IMAGENET_C_BENCHMARK if category(c) == cat]
            present = [per[c] for c in members if c in per]
            if present:
                missing = [c for c in members if c not in per]
                rows.append(_mean_row(model, "category", "", cat, present, missing))
        missing = [c for c in IMAGENET_C_BENCHMARK if c not in per]
        label = "partial mCE" if missing else "mCE"
        rows.append(_mean_row(model, label, "", "", list(per.values()), missing))
    return pd.DataFrame(rows, columns=IMAGENET_C_MCE_COLUMNS)


def _category_rows(source, table, metrics) -> list[dict]:
    rows = []
    table = table.assign(category=[category(c) for c in table["corruption"]])
    order = {c: i for i, c in enumerate([*CORRUPTION_CATEGORIES, OTHER_CATEGORY])}
    keys = ["model", "label_space", "category"]
    groups = sorted(table.groupby(keys), key=lambda kv: (kv[0][0], kv[0][1], order[kv[0][2]]))
    for (model, space, cat), group in groups:
        for metric in metrics:
            if metric not in group.columns:
                continue
            have = group[group[metric].notna()].sort_values("corruption")
            if have.empty:
                continue
            rows.append({"source": source, "model": model, "label_space": space,
                         "category": cat, "metric": metric,
                         "value": float(have[metric].astype(float).mean()),
                         "n_corruptions": len(have),
                         "corruptions": ";".join(have["corruption"])})  # fmt: skip
    return rows


def _by_severity(imagenet_c: pd.DataFrame) -> dict[tuple[str, str, str], np.ndarray]:
    """``{(model, label space, corruption): accuracy at severities 1..5}`` where all five exist."""
    out = {}
    for key, group in imagenet_c.groupby(["model", "label_space", "corruption"]):
        acc = _severity_accuracies(group)[1]
        if acc is not None:
            out[key] = acc
    return out


def _percent(value: float) -> float:
    """A ratio in per cent to 3 decimals: the accuracies it comes from are read from the ImageNet-C
    table, written to 6 significant digits, so further digits are rounding noise (4e-05 for 0)."""
    return round(float(value), 3)


def zsl_ratios(
    imagenet_c: pd.DataFrame,
    clean_accuracy: Mapping[tuple[str, str], float],
    defense_pairs: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Yucel et al.'s ratios of reduction per model, label space and corruption (columns
    :data:`ZSL_RATIO`, :data:`ZSL_DEFENSE_RATIO`), per cent, each the mean over the five severities.

    ``clean_accuracy``: ``{(model, label space): accuracy}`` on the clean images of its ImageNet-C
    sets; a model or label space without one (or with 0) gets no ratio. ``defense_pairs``:
    ``{defended model: undefended model}``; a defended model's :data:`ZSL_DEFENSE_RATIO` compares
    its corrupted accuracy with the undefended model's at each severity, over the undefended
    model's clean accuracy.
    """
    acc = _by_severity(imagenet_c)
    rows = []
    for (model, space, corruption), a in sorted(acc.items()):
        row = {"model": model, "label_space": space, "corruption": corruption}
        clean = clean_accuracy.get((model, space), np.nan)
        if clean > 0 and not np.isnan(a).any():
            row[ZSL_RATIO] = _percent(np.mean(100.0 * (clean - a) / clean))
        base = (defense_pairs or {}).get(model)
        base_clean = clean_accuracy.get((base, space), np.nan)
        base_acc = acc.get((base, space, corruption))
        if base_acc is not None and base_clean > 0 and not np.isnan(a - base_acc).any():
            row[ZSL_DEFENSE_RATIO] = _percent(np.mean(100.0 * (base_acc - a) / base_clean))
        rows.append(row)
    return pd.DataFrame(
        rows, columns=["model", "label_space", "corruption", ZSL_RATIO, ZSL_DEFENSE_RATIO]
    )


def category_table(
    imagenet_c: pd.DataFrame | None = None,
    vcr_metrics: pd.DataFrame | None = None,
    clean_accuracy: Mapping[tuple[str, str], float] | None = None,
    defense_pairs: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Means by corruption category (:data:`~vcrbench.vocab.CATEGORY_COLUMNS`, long format):
    ImageNet-C accuracy and consistency (the severity-mean rows, ``source = "imagenet_c"``) and
    the VCR metrics (R̂, HMRI, MRSI, and the zero-shot R̂ where present; ``source = "vcr"``), per
    model and label space. A metric's mean is over the category's corruptions where it has a value;
    ``corruptions`` names them. With ``clean_accuracy`` (and ``defense_pairs``) the ImageNet-C rows
    add Yucel et al.'s ratios of reduction (:func:`zsl_ratios`), per cent."""
    rows: list[dict] = []
    if imagenet_c is not None and len(imagenet_c):
        means = imagenet_c[imagenet_c["severity"].astype(str) == "mean"]
        rows += _category_rows("imagenet_c", means, IMAGENET_C_CATEGORY_METRICS)
        if clean_accuracy:
            ratios = zsl_ratios(imagenet_c, clean_accuracy, defense_pairs)
            rows += _category_rows("imagenet_c", ratios, (ZSL_RATIO, ZSL_DEFENSE_RATIO))
    if vcr_metrics is not None and len(vcr_metrics):
        rows += _category_rows("vcr", vcr_metrics, VCR_CATEGORY_METRICS)
    return pd.DataFrame(rows, columns=CATEGORY_COLUMNS)


def read_imagenet_c_accuracy(path: str | os.PathLike) -> pd.DataFrame:
    """The ImageNet-C accuracy table (severity as text: ``1`` … ``5`` and ``mean``)."""
    return pd.read_csv(path, dtype={"severity": str})


def write_mce_table(
    accuracy_path: str | os.PathLike,
    predictions: Mapping[str, Sequence[str | os.PathLike]],
    clean: Mapping[str, str | os.PathLike],
    out_path: str | os.PathLike,
) -> pd.DataFrame:
    """:func:`mce_table` from the ImageNet-C accuracy table, each model's ImageNet-C prediction
    files (``{model: [files]}``, for the images its clean error counts) and clean predictions."""
    errors = clean_errors(clean, _image_ids(predictions))
    table = mce_table(read_imagenet_c_accuracy(accuracy_path), errors)
    io.write_csv(table, out_path)
    return table


def _image_ids(predictions: Mapping[str, Sequence[str | os.PathLike]]) -> dict[str, list]:
    """``{model: the image ids of its ImageNet-C prediction files}`` (``{model: [files]}``)."""
    return {
        model: [i for f in files for i in io.read_columns(f, ["image_id"])["image_id"]]
        for model, files in predictions.items()
    }


def clean_accuracies(
    predictions: Mapping[str, Sequence[str | os.PathLike]],
    clean: Mapping[str, str | os.PathLike],
    label_space: str,
) -> dict[tuple[str, str], float]:
    """``{(model, label_space): top-1 accuracy}`` on the clean versions of each model's ImageNet-C
    images (the images :func:`clean_errors` counts); a model without a labelled clean prediction
    of them is left out (it gets no ratio of reduction)."""
    out = {}
    for model, ids in _image_ids(predictions).items():
        try:
            out[(model, label_space)] = 1.0 - clean_errors(clean, {model: ids})[model]
        except TableError:
            continue
    return out


def write_category_table(
    metrics_path: str | os.PathLike,
    imagenet_c_path: str | os.PathLike | None,
    out_path: str | os.PathLike,
    clean_accuracy: Mapping[tuple[str, str], float] | None = None,
    defense_pairs: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """:func:`category_table` of the VCR metrics table and (where given) the ImageNet-C one, with
    the ratios of reduction where ``clean_accuracy`` (:func:`clean_accuracies`) is given."""
    imagenet_c = None if imagenet_c_path is None else read_imagenet_c_accuracy(imagenet_c_path)
    table = category_table(imagenet_c, pd.read_csv(metrics_path), clean_accuracy, defense_pairs)
    io.write_csv(table, out_path)
    return table
