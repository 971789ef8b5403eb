"""A model's outcomes per label space: its predictions on a test set joined to its predictions on
the clean images, as the estimator takes them.

- accuracy (``a``): ``f(x') = y`` over labelled samples, anchored at the model's clean accuracy on
  the same label space (the clean outcomes are resampled in the bootstrap too);
- consistency (``p``): ``f(x') = f(x)`` over all samples, anchored at 1 (a deterministic model).

Label spaces: the dataset's own (``pred == label``) and, for ImageNet-1k models, the 16 entry-level
classes of the human experiments (``pred16 == label16``, accuracy over images of those classes),
the 16-class decision by ``estimation.decision16``'s rule
(:data:`vcrbench.labels.DECISION16_RULES`). Read by the curves and the ImageNet-C accuracy
(:mod:`vcrbench.evaluation.evaluate`), the defenses' effects and the clean-correct tables.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from vcrbench.errors import EvaluationError
from vcrbench.files import io
from vcrbench.labels import PROB16_COLUMNS, check_decision16, decide_16_by
from vcrbench.vocab import (
    HUMAN_DECISION,
    HUMAN_LABEL_SPACE,
    PREDICTION_COLUMNS,
    decision_columns,
)

#: The 16-class rule of the ``pred16`` column a prediction file stores (inference's argmax of
#: the mean probabilities, :mod:`vcrbench.inference.outputs`): the tables that do not follow
#: ``estimation.decision16`` (ImageNet-C accuracy, the defenses) read it as stored.
STORED_DECISION16 = "mean"


def read_prediction_file(path: str | os.PathLike, extra: Sequence[str] = ()) -> pd.DataFrame:
    """The columns of a prediction file that evaluation reads (:data:`PREDICTION_COLUMNS`, plus
    ``extra`` ones where the file has them), not its top-5, probabilities or log-probabilities."""
    return io.read_columns(path, [*PREDICTION_COLUMNS, *extra])


def read_predictions(paths: Sequence[str | os.PathLike], extra: Sequence[str] = ()) -> pd.DataFrame:
    frames = [read_prediction_file(p, extra) for p in paths]
    if not frames:
        raise EvaluationError("no prediction files given")
    out = pd.concat(frames, ignore_index=True)
    if out["sample_id"].duplicated().any():
        raise EvaluationError(f"duplicate sample ids across prediction files {list(paths)}")
    return out.sort_values("sample_id", kind="stable").reset_index(drop=True)


def extra_columns(decision16: str) -> tuple[str, ...]:
    """The prediction file's columns beyond :data:`PREDICTION_COLUMNS` that the 16-class rule
    ``decision16`` reads (``sum``: the mean probabilities it sums; the others: none)."""
    return PROB16_COLUMNS if check_decision16(decision16) == "sum" else ()


def _decided16(frame: pd.DataFrame, decision16: str) -> pd.DataFrame:
    """``frame`` with its ``pred16`` column decided by ``decision16`` (the stored column is the
    ``mean`` rule's; the others are recomputed from ``pred`` or the ``prob16_*`` columns)."""
    if check_decision16(decision16) == STORED_DECISION16:
        return frame
    prob16 = frame[list(PROB16_COLUMNS)].to_numpy() if decision16 == "sum" else None
    out = frame.copy()
    out[HUMAN_DECISION[0]] = decide_16_by(decision16, frame["pred"].to_numpy(), prob16)
    return out


def decisions(
    preds: pd.DataFrame,
    clean: pd.DataFrame,
    label_space: str,
    dataset_space: str,
    *,
    decision16: str,
    where: str = "predictions",
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(pred, label, clean_pred)`` of every sample in one label space: the model's decision, the
    sample's label (< 0: none) and the model's decision on the same clean image. None where the
    model makes no decisions in that space (16 classes, for a model not over ImageNet-1k).
    ``decision16``: the 16-class rule (:data:`vcrbench.labels.DECISION16_RULES`; ``top1`` gives
    -1, no class, where the top-1 is none of the 16 classes' ImageNet classes)."""
    pred_col, label_col = decision_columns(label_space, dataset_space)
    if label_space == HUMAN_LABEL_SPACE and (preds[pred_col] < 0).all():
        return None  # the model's outputs are not ImageNet-1k: no 16-class decision
    if label_space == HUMAN_LABEL_SPACE:
        preds, clean = _decided16(preds, decision16), _decided16(clean, decision16)
    clean_pred = clean.drop_duplicates("image_id").set_index("image_id")[pred_col]
    missing = ~preds["image_id"].isin(clean_pred.index)
    if missing.any():
        raise EvaluationError(
            f"{where}: {int(missing.sum())} samples have no clean prediction "
            f"(e.g. image {preds.loc[missing, 'image_id'].iloc[0]!r})"
        )
    return (
        preds[pred_col].to_numpy(),
        preds[label_col].to_numpy(),
        clean_pred.loc[preds["image_id"]].to_numpy(),
    )


class Outcomes(NamedTuple):
    """The samples of one property in one label space, as the estimator takes them."""

    dv: np.ndarray
    y: np.ndarray
    anchor: np.ndarray | float
    groups: np.ndarray  # image id of each sample
    anchor_groups: np.ndarray | None  # image id of each clean outcome (array anchors only)


def outcomes(
    preds: pd.DataFrame,
    clean: pd.DataFrame,
    label_space: str,
    dataset_space: str,
    *,
    decision16: str,
) -> dict[str, Outcomes] | None:
    """``{"a": Outcomes, "p": Outcomes}`` in one label space; None if not available.

    ``anchor`` for accuracy is the array of clean 0/1 outcomes (so the bootstrap resamples it);
    for consistency it is 1.0. ``groups``/``anchor_groups`` are the image ids of the samples and
    of the clean outcomes: the bootstrap resamples images, every sample of an image and its clean
    outcome together. A property with no observations is left out. ``decision16``: the 16-class
    rule (:func:`decisions`); a decision of no class (-1, ``top1``) is neither correct nor
    consistent, as a human's missing answer.
    """
    found = decisions(preds, clean, label_space, dataset_space, decision16=decision16)
    if found is None:
        return None
    pred, label, clean_pred = found
    pred_col, label_col = decision_columns(label_space, dataset_space)
    if label_space == HUMAN_LABEL_SPACE:
        clean = _decided16(clean, decision16)  # the clean decisions of the anchor, by the same rule
    dv = preds["dv"].to_numpy(np.float64)
    images = preds["image_id"].astype(str).to_numpy()
    out: dict = {}
    labelled = label >= 0
    clean_labelled = clean[label_col].to_numpy() >= 0
    if labelled.any() and clean_labelled.any():
        y = (pred[labelled] == label[labelled]).astype(np.float64)
        anchor = (
            clean[pred_col].to_numpy()[clean_labelled]
            == clean[label_col].to_numpy()[clean_labelled]
        ).astype(np.float64)
        anchor_images = clean["image_id"].astype(str).to_numpy()[clean_labelled]
        out["a"] = Outcomes(dv[labelled], y, anchor, images[labelled], anchor_images)
    same = (pred == clean_pred) & (pred >= 0)
    out["p"] = Outcomes(dv, same.astype(np.float64), 1.0, images, None)
    return out
