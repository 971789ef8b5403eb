"""Curves and R̂ on restricted decisions or samples, from Yucel et al.'s zero-shot corruption study.

- **Clean-correct samples** ("corrupting only the correct predictions"): the study keeps only the
  images the model classifies correctly when clean, so that what the corruption does is not mixed
  with what the model already gets wrong. Here: accuracy along Δv over the samples whose clean
  image the model classifies correctly (in that label space), anchored at s(0) = 1 (true by
  construction); on a dataset with its own classes also the zero-shot properties
  (:func:`vcrbench.estimation.zeroshot.zero_shot_estimates`: per-class mean, and with a split seen,
  unseen and H) on the same samples.
- **Unseen-only decisions** (the ZSL setting of Xian et al. 2019, the study's "ZSL" columns): the
  decision is the argmax over the unseen classes only, and accuracy (per-class mean) is over
  images of unseen classes. It needs each sample's scores for every class: the saved
  log-probabilities (``inference.save_logprobs``). For a CLIP model this is the same decision as a
  zero-shot head built from the unseen classes' prompts alone (a class's logit is its own cosine
  similarity, and log-softmax shifts every logit of an image by the same amount), up to ties that
  the float16 log-probabilities may create (ties go to the lower class index).

On ImageNet-C's fixed severities the clean-correct analysis is a table of accuracy per severity
(:func:`imagenet_c_clean_correct`). The Δv analyses write an estimates table
(:data:`~vcrbench.vocab.RESTRICTED_COLUMNS`: R̂ with its interval, samples and the clean anchor) and
a curves table (:data:`~vcrbench.vocab.RESTRICTED_CURVE_COLUMNS`: the estimated curve on the
estimator's grid, with its band).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from vcrbench import estimation, seeding
from vcrbench.errors import EvaluationError, ShortSampleError
from vcrbench.estimation import zeroshot
from vcrbench.evaluation import outcomes
from vcrbench.files import io
from vcrbench.labels import DEFAULT_DECISION16
from vcrbench.vocab import (
    IMAGENET1K,
    IMAGENET_C_COLUMNS,
    RESTRICTED_COLUMNS,
    RESTRICTED_CURVE_COLUMNS,
    resolve_label_spaces,
)

log = logging.getLogger(__name__)

#: The prediction files' log-probability column (``vcrbench.inference.outputs.LOGPROBS``; not
#: imported from there, which would load torch for a table).
LOGPROBS = "logprobs"
#: The analyses, and the prefix of their estimates' seeds.
CLEAN_CORRECT, UNSEEN_ONLY = "clean_correct", "unseen_only"


def _rows(model, corruption, space, prop, est: estimation.Estimate, n_images: int):
    row = {"model": model, "corruption": corruption, "label_space": space, "property": prop,
           "n_samples": est.n, "n_images": n_images, "clean_accuracy": est.anchor0,
           "R": est.area, "R_lo": est.area_lo, "R_hi": est.area_hi}  # fmt: skip
    curve = pd.DataFrame({"model": model, "corruption": corruption, "label_space": space,
                          "property": prop, "v": est.grid, "value": est.values, "lo": est.lo,
                          "hi": est.hi})  # fmt: skip
    return row, curve


def _empty_row(model, corruption, space, prop, n, images) -> dict:
    """A row without an estimate (the subset is too small for Alg. 1): counts only, NaN R̂."""
    return {"model": model, "corruption": corruption, "label_space": space, "property": prop,
            "n_samples": n, "n_images": len(set(images)), "clean_accuracy": 1.0, "R": np.nan,
            "R_lo": np.nan, "R_hi": np.nan}  # fmt: skip


def clean_correct(
    preds: pd.DataFrame,
    clean: pd.DataFrame,
    *,
    model: str,
    corruption: str,
    settings: Mapping,
    seed: int,
    dataset_label_space: str = IMAGENET1K,
    label_spaces: Sequence[str],
    zero_shot: Mapping | None = None,
) -> tuple[list[dict], list[pd.DataFrame]]:
    """Estimates on the samples whose clean image the model classifies correctly (module
    docstring): ``accuracy`` in each label space of ``label_spaces`` (``estimation.label_spaces``),
    and the zero-shot properties in the dataset's where ``zero_shot`` (``{"seen": …, "unseen":
    …}``) is given. Returns table rows and curves."""
    decision16 = settings.get("decision16", DEFAULT_DECISION16)
    rows, curves = [], []
    for space in resolve_label_spaces(label_spaces, dataset_label_space):
        # the clean-correct samples' accuracy starts at 1 (anchor1: chance, at most that)
        est_settings = estimation.EstimationSettings.of_config(settings).for_label_space(space, 1.0)
        found = outcomes.decisions(preds, clean, space, dataset_label_space, decision16=decision16)
        if found is None:
            continue
        pred, label, clean_pred = found
        keep = (label >= 0) & (clean_pred == label)
        if not keep.any():
            continue
        sub = preds[keep]
        images = sub["image_id"].astype(str).to_numpy()
        try:
            est = estimation.estimate(
                sub["dv"].to_numpy(np.float64),
                (pred[keep] == label[keep]).astype(np.float64),
                1.0,
                est_settings,
                groups=images,
                seed=seeding.derive_seed(seed, CLEAN_CORRECT, corruption, space, "accuracy"),
            )
        except ShortSampleError as exc:  # too few samples left for Alg. 1's bins
            log.warning("%s on %s, %s: clean-correct subset: %s", model, corruption, space, exc)
            rows.append(_empty_row(model, corruption, space, "accuracy", len(sub), images))
            continue
        row, curve = _rows(model, corruption, space, "accuracy", est, len(set(images)))
        rows.append(row)
        curves.append(curve)
        if zero_shot is not None and space == dataset_label_space:
            ok_images = set(images)
            try:
                found = zeroshot.zero_shot_estimates(
                    sub,
                    clean[clean["image_id"].astype(str).isin(ok_images)],
                    seen=zero_shot.get("seen"),
                    unseen=zero_shot.get("unseen"),
                    settings=settings,
                    seed_of=lambda name, space=space: seeding.derive_seed(
                        seed, CLEAN_CORRECT, corruption, space, name
                    ),
                )
            except ShortSampleError as exc:
                log.warning(
                    "%s on %s: clean-correct zero-shot properties: %s", model, corruption, exc
                )
                found = {}
            for name, z in found.items():
                row, curve = _rows(model, corruption, space, name, z, len(ok_images))
                rows.append(row)
                curves.append(curve)
    return rows, curves


def unseen_classes(zero_shot: Mapping | None) -> list[int]:
    """The unseen classes of the run's zero-shot split (an error naming ``dataset.zero_shot``
    where the dataset has none)."""
    if zero_shot is None or zero_shot.get("unseen") is None:
        raise EvaluationError(
            "unseen-only accuracy needs a zero-shot split (dataset.zero_shot with seen and unseen "
            "classes) on a dataset with its own classes"
        )
    return [int(c) for c in zero_shot["unseen"]]


def unseen_only_decision(logprobs: np.ndarray, unseen: Sequence[int]) -> np.ndarray:
    """Each row's most probable class among ``unseen`` (class indices; ties: the lower index)."""
    unseen = np.sort(np.asarray(unseen, dtype=np.int64))
    if len(unseen) == 0:
        raise EvaluationError("unseen-only decision: the split has no unseen class")
    if unseen.min() < 0 or unseen.max() >= logprobs.shape[1]:
        raise EvaluationError(
            f"unseen-only decision: class indices must lie in [0, {logprobs.shape[1]}), "
            f"got {unseen.min()}..{unseen.max()}"
        )
    return unseen[np.argmax(np.asarray(logprobs, np.float32)[:, unseen], axis=1)]


def read_with_logprobs(paths: Sequence[str | os.PathLike]) -> tuple[pd.DataFrame, np.ndarray]:
    """Prediction files' decision columns and their ``logprobs`` (an (N, classes) array), rows
    sorted by sample id; an error naming ``inference.save_logprobs`` where a file lacks them."""
    frames, mats = [], []
    for path in paths:
        frame = outcomes.read_prediction_file(path)
        if LOGPROBS not in pq.read_schema(path).names:
            raise EvaluationError(
                f"{path}: no saved log-probabilities ('{LOGPROBS}' column); the unseen-only "
                "decision needs them: set inference.save_logprobs: true and rerun inference"
            )
        frames.append(frame)
        mats.append(io.fixed_size_matrix(path, LOGPROBS))
    if not frames:
        raise EvaluationError("unseen-only accuracy: no prediction files given")
    frame = pd.concat(frames, ignore_index=True)
    order = np.argsort(frame["sample_id"].to_numpy(), kind="stable")
    return frame.iloc[order].reset_index(drop=True), np.concatenate(mats)[order]


def unseen_only(
    prediction_paths: Sequence[str | os.PathLike],
    clean_path: str | os.PathLike,
    *,
    model: str,
    corruption: str,
    unseen: Sequence[int],
    settings: Mapping,
    seed: int,
    dataset_label_space: str,
) -> tuple[list[dict], list[pd.DataFrame]]:
    """The per-class mean accuracy with the unseen-only decision, over images of unseen classes
    (module docstring), along Δv and on the clean images (the anchor)."""
    preds, lp = read_with_logprobs(prediction_paths)
    clean, clean_lp = read_with_logprobs([clean_path])
    keep = np.isin(preds["label"].to_numpy(), list(unseen))
    c_keep = np.isin(clean["label"].to_numpy(), list(unseen))
    if not keep.any() or not c_keep.any():
        raise EvaluationError(f"unseen-only accuracy: {model} on {corruption}: no unseen images")
    preds = preds[keep].assign(pred=unseen_only_decision(lp[keep], unseen))
    clean = clean[c_keep].assign(pred=unseen_only_decision(clean_lp[c_keep], unseen))
    found = zeroshot.zero_shot_estimates(
        preds,
        clean,
        seen=None,
        unseen=None,
        settings=settings,
        seed_of=lambda name: seeding.derive_seed(
            seed, UNSEEN_ONLY, corruption, dataset_label_space, name
        ),
    )
    est = found["class_mean_accuracy"]
    n_images = int(preds["image_id"].nunique())
    row, curve = _rows(
        model, corruption, dataset_label_space, "unseen_only_accuracy", est, n_images
    )
    return [row], [curve]


def write_restricted_tables(
    analysis: Callable[..., tuple[list[dict], list[pd.DataFrame]]],
    jobs: Sequence[tuple[str, str, Sequence[str]]],
    clean: Mapping[str, str | os.PathLike],
    table_out: str | os.PathLike,
    curves_out: str | os.PathLike,
    **kwargs,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run ``analysis`` (:func:`clean_correct_job` or :func:`unseen_only`) for every
    ``(model, corruption, prediction files)`` and write both tables, rows sorted by model and
    corruption."""
    rows, curves = [], []
    for model, corruption, files in sorted(jobs, key=lambda j: (j[0], j[1])):
        r, c = analysis(list(files), clean[model], model=model, corruption=corruption, **kwargs)
        rows += r
        curves += c
    table = pd.DataFrame(rows, columns=RESTRICTED_COLUMNS)
    curve_table = (
        pd.concat(curves, ignore_index=True)[RESTRICTED_CURVE_COLUMNS]
        if curves
        else pd.DataFrame(columns=RESTRICTED_CURVE_COLUMNS)
    )
    io.write_csv(table, table_out)
    io.write_csv(curve_table, curves_out)
    return table, curve_table


def clean_correct_job(prediction_paths, clean_path, **kwargs):
    """:func:`clean_correct` from a model's prediction files on one test set and its clean ones."""
    extra = outcomes.extra_columns(kwargs["settings"].get("decision16", DEFAULT_DECISION16))
    preds = outcomes.read_predictions(prediction_paths, extra)
    return clean_correct(preds, outcomes.read_prediction_file(clean_path, extra), **kwargs)


def imagenet_c_clean_correct(
    predictions: Mapping[tuple[str, str], Sequence[str | os.PathLike]],
    clean: Mapping[str, str | os.PathLike],
    *,
    dataset_label_space: str = IMAGENET1K,
    label_spaces: Sequence[str],
) -> pd.DataFrame:
    """ImageNet-C accuracy per severity on the images the model classifies correctly when clean
    (the columns of :func:`vcrbench.evaluation.evaluate.imagenet_c_accuracy`; ``n`` counts those
    images, and ``consistency``, the share whose decision equals the clean one, equals ``accuracy``
    there). ``mean`` is the mean over the severities. The 16-class decision is the stored one
    (:data:`~vcrbench.evaluation.outcomes.STORED_DECISION16`), as in the ImageNet-C accuracy."""
    rows = []
    for (model, corruption), files in sorted(predictions.items()):
        preds = pd.concat(
            [outcomes.read_prediction_file(f, ["severity"]) for f in files], ignore_index=True
        )
        ref = outcomes.read_prediction_file(clean[model])
        for space in resolve_label_spaces(label_spaces, dataset_label_space):
            found = outcomes.decisions(
                preds, ref, space, dataset_label_space,
                decision16=outcomes.STORED_DECISION16, where=str(files[0]),
            )  # fmt: skip
            if found is None:
                continue
            pred, label, clean_pred = found
            keep = (label >= 0) & (clean_pred == label)
            severity = preds["severity"].to_numpy()
            per = []
            for sev in sorted(np.unique(severity)):
                at = keep & (severity == sev)
                acc = float((pred[at] == label[at]).mean()) if at.any() else np.nan
                per.append((str(int(sev)), acc, int(at.sum())))
            mean = float(np.mean([p[1] for p in per])) if per else np.nan
            per.append(("mean", mean, sum(p[2] for p in per)))
            rows += [(model, corruption, space, s, a, a, n, n) for s, a, n in per]
    return pd.DataFrame(rows, columns=IMAGENET_C_COLUMNS)
