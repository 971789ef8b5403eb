"""The effect of each defense: a defended model against the same model undefended, per corruption.

Two measures, one row per defended model, corruption and label space
(``results/tables/defenses.csv``, docs/defenses.md):

- Yucel et al.'s figure of merit (ZSL robustness study): the defense's change of the corrupted
  accuracy as a share of the undefended model's clean accuracy,
  ``relative_change = (acc_defended − acc_undefended) / clean_acc_undefended``, where the corrupted
  accuracies pool every labelled sample of the corruption's test set (they average over the
  severities; here the samples spread over Δv). ``clean_relative_change`` is the defense's change of
  the clean accuracy on the same scale. A paired bootstrap over images (both models, clean and
  corrupted outcomes of an image resampled together) gives the interval, widened for few images as
  the estimator's intervals are (``small_sample: t``);
- ΔR̂ = R̂_defended − R̂_undefended for accuracy (``R_a``) and consistency (``R_p``), with the
  paired bootstrap intervals and p-values of :func:`vcrbench.evaluation.differences.differences`:
  both models' replicate b resample the same images.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from vcrbench import seeding
from vcrbench.errors import EvaluationError
from vcrbench.estimation import percentile_interval
from vcrbench.estimation.bootstrap import small_sample_factor
from vcrbench.evaluation.differences import differences
from vcrbench.evaluation.outcomes import (
    STORED_DECISION16,
    outcomes,
    read_prediction_file,
    read_predictions,
)
from vcrbench.files import io
from vcrbench.vocab import (
    DEFENSE_COLUMNS,
    DEFENSE_DELTA_COLUMNS,
    resolve_label_spaces,
)

PathLike = str | os.PathLike


def _per_image(images: np.ndarray, values: np.ndarray, index: Mapping[str, int]) -> np.ndarray:
    out = np.zeros(len(index))
    np.add.at(out, np.fromiter((index[i] for i in images), np.int64, len(images)), values)
    return out


def relative_change(
    defended: Mapping[str, np.ndarray],
    undefended: Mapping[str, np.ndarray],
    *,
    n_boot: int,
    level: float,
    seed: int,
    small_sample: str,
) -> dict:
    """The figure of merit with its paired bootstrap interval.

    ``defended``/``undefended``: ``y`` (0/1 outcomes of the corrupted samples), ``images`` (their
    image ids), ``clean`` (0/1 clean outcomes) and ``clean_images``; the samples of both models
    are the same, in the same order. Returns the accuracies, ``relative_change`` (NaN when the
    undefended clean accuracy is 0) and its interval.
    """
    for key in ("images", "clean_images"):
        if not np.array_equal(defended[key], undefended[key]):
            raise EvaluationError(f"defended and undefended outcomes are not paired ({key} differ)")
    acc_d, acc_u = float(np.mean(defended["y"])), float(np.mean(undefended["y"]))
    clean_d, clean_u = float(np.mean(defended["clean"])), float(np.mean(undefended["clean"]))

    point = (acc_d - acc_u) / clean_u if clean_u > 0 else np.nan
    out = {
        "clean_accuracy_undefended": clean_u,
        "clean_accuracy_defended": clean_d,
        "clean_relative_change": (clean_d - clean_u) / clean_u if clean_u > 0 else np.nan,
        "accuracy_undefended": acc_u,
        "accuracy_defended": acc_d,
        "relative_change": point,
        "relative_change_lo": np.nan,
        "relative_change_hi": np.nan,
    }
    ids = sorted(set(defended["images"]) | set(defended["clean_images"]))
    if n_boot < 1 or not ids:
        return out
    index = {image: k for k, image in enumerate(ids)}
    ones = np.ones(len(defended["y"]))
    n = _per_image(defended["images"], ones, index)
    dy = _per_image(defended["images"], defended["y"] - undefended["y"], index)
    m = _per_image(defended["clean_images"], np.ones(len(undefended["clean"])), index)
    cu = _per_image(defended["clean_images"], undefended["clean"], index)
    rng = seeding.rng(seed, "defense-effect")
    weights = np.stack(
        [
            np.bincount(rng.integers(0, len(ids), len(ids)), minlength=len(ids))
            for _ in range(n_boot)
        ]
    ).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        # A resample without samples or with clean accuracy 0 has no ratio: left out.
        reps = ((weights @ dy) / (weights @ n)) / ((weights @ cu) / (weights @ m))
    reps = reps[np.isfinite(reps)]
    if reps.size == 0 or not np.isfinite(point):
        return out
    if small_sample == "t":
        reps = point + small_sample_factor(len(ids), level) * (reps - point)
    lo, hi = percentile_interval(reps, level)
    out.update(relative_change_lo=float(lo), relative_change_hi=float(hi))
    return out


def _accuracy_outcomes(preds, clean, space, dataset_space) -> dict[str, np.ndarray] | None:
    found = outcomes(preds, clean, space, dataset_space, decision16=STORED_DECISION16)
    if found is None or "a" not in found:
        return None
    a = found["a"]
    return {"y": a.y, "images": a.groups, "clean": a.anchor, "clean_images": a.anchor_groups}


def _delta_rows(replicates: pd.DataFrame, model: str, undefended: str) -> pd.DataFrame:
    pair = replicates[replicates["model"].isin([model, undefended])]
    table = differences(pair, relations={model: undefended}, metrics=("R_a", "R_p"))
    return table[(table["model_a"] == model) & (table["model_b"] == undefended)]


def defense_effects(
    pairs: Mapping[str, str],
    predictions: Mapping[str, Mapping[str, Sequence[PathLike]]],
    clean: Mapping[str, PathLike],
    replicates: pd.DataFrame,
    *,
    defenses: Mapping[str, str],
    dataset_label_space: str,
    label_spaces: Sequence[str],
    settings: Mapping,
    seed: int,
) -> pd.DataFrame:
    """The :data:`DEFENSE_COLUMNS` table of every ``{defended: undefended}`` pair.

    ``predictions``: model -> corruption -> its prediction files (the test-set groups);
    ``clean``: model -> its clean prediction file; ``replicates``: the replicate metrics of
    both models of every pair (``replicate_metrics.parquet``); ``defenses``: model -> a label of
    its defense; ``label_spaces``: ``estimation.label_spaces``; ``settings``: the config's
    ``estimation`` block (``n_boot``, ``level``, ``small_sample``). The 16-class decision is the
    stored one (:data:`~vcrbench.evaluation.outcomes.STORED_DECISION16`).
    """
    spaces = resolve_label_spaces(label_spaces, dataset_label_space)
    rows = []
    for model, undefended in sorted(pairs.items()):
        for name in (model, undefended):
            if name not in predictions or name not in clean:
                raise EvaluationError(f"defense table: no predictions of model {name!r}")
        clean_d, clean_u = (
            read_prediction_file(clean[model]),
            read_prediction_file(clean[undefended]),
        )
        deltas = _delta_rows(replicates, model, undefended)
        for corruption in sorted(predictions[model]):
            preds_d, preds_u = _paired_predictions(predictions, model, undefended, corruption)
            for space in spaces:
                d = _accuracy_outcomes(preds_d, clean_d, space, dataset_label_space)
                u = _accuracy_outcomes(preds_u, clean_u, space, dataset_label_space)
                if d is None or u is None:
                    continue
                row = {
                    "model": model,
                    "undefended": undefended,
                    "defense": defenses.get(model, ""),
                    "corruption": corruption,
                    "label_space": space,
                    **_effect(d, u, settings, seed, model, corruption, space),
                }
                here = deltas[
                    (deltas["corruption"] == corruption) & (deltas["label_space"] == space)
                ]
                row.update(_deltas(here))
                rows.append(row)
    if not rows:
        return pd.DataFrame(columns=DEFENSE_COLUMNS)
    return pd.DataFrame(rows)[DEFENSE_COLUMNS]


def _paired_predictions(
    predictions: Mapping[str, Mapping[str, Sequence[PathLike]]],
    model: str,
    undefended: str,
    corruption: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The predictions of the defended ``model`` and of ``undefended`` on ``corruption``, which
    must be of the same samples."""
    if corruption not in predictions[undefended]:
        raise EvaluationError(f"defense table: {undefended!r} has no predictions on {corruption!r}")
    preds_d = read_predictions(predictions[model][corruption])
    preds_u = read_predictions(predictions[undefended][corruption])
    if not np.array_equal(preds_d["sample_id"], preds_u["sample_id"]):
        raise EvaluationError(
            f"defense table: {model!r} and {undefended!r} did not predict the same samples "
            f"of {corruption!r}"
        )
    return preds_d, preds_u


def _effect(d, u, settings: Mapping, seed: int, model: str, corruption: str, space: str) -> dict:
    """The sample counts, the bootstrap settings and :func:`relative_change` of the defended
    outcomes ``d`` against the undefended ``u``."""
    row = {
        "n_samples": len(d["y"]),
        "n_images": len(set(d["images"]) | set(d["clean_images"])),
        "n_boot": int(settings["n_boot"]),
        "level": float(settings["level"]),
    }
    row.update(
        relative_change(
            d,
            u,
            n_boot=int(settings["n_boot"]),
            level=float(settings["level"]),
            seed=seeding.derive_seed(seed, "defenses", model, corruption, space),
            small_sample=settings["small_sample"],
        )
    )
    return row


def _deltas(here: pd.DataFrame) -> dict:
    """The :data:`DEFENSE_DELTA_COLUMNS` of R̂_a and R̂_p from ``here``, the replicate deltas of
    one corruption and label space (NaN where a metric has none)."""
    row = {}
    for metric in ("R_a", "R_p"):
        r = here[here["metric"] == metric]
        for source, column in DEFENSE_DELTA_COLUMNS.items():
            value = float(r.iloc[0][source]) if len(r) else np.nan
            row[column.format(metric=metric)] = value
    return row


def defense_table(
    pairs: Mapping[str, str],
    predictions: Mapping[str, Mapping[str, Sequence[PathLike]]],
    clean: Mapping[str, PathLike],
    replicate_paths: Sequence[PathLike],
    out_path: PathLike,
    **kwargs,
) -> pd.DataFrame:
    """:func:`defense_effects` from the replicate files, written as CSV (``defenses.csv``)."""
    frames = [io.read_parquet(p) for p in replicate_paths]
    if not frames:
        raise EvaluationError("defense table: no replicate metrics given")
    table = defense_effects(
        pairs, predictions, clean, pd.concat(frames, ignore_index=True), **kwargs
    )
    io.write_csv(table, out_path)
    return table
