"""Per-condition accuracies of Geirhos' observers under both decision rules."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from vcrbench.humans.geirhos.experiments import (
    COLLECTIONS,
    NO_ANSWER,
    PRETRAINED_NETWORKS,
    RULES,
    _check_collection,
)
from vcrbench.humans.geirhos.store import _strings, load
from vcrbench.humans.trial_schema import HumanDataError

#: The release this copy was made from.

# --------------------------------------------------------------------------- accuracies


def _correct(df: pd.DataFrame, column: str) -> np.ndarray:
    return _strings(df[column]) == _strings(df["category"])


def _accuracy_rows(df: pd.DataFrame, correct: np.ndarray, by: list[str], unit: str) -> pd.DataFrame:
    """n, n_correct, n_no_answer, accuracy per ``by``; unit_mean: mean over ``unit`` of
    accuracies."""
    keys = list(dict.fromkeys([*by, unit]))
    d = pd.DataFrame(
        {k: df[k].to_numpy() if k == "condition_index" else _strings(df[k]) for k in keys}
    )
    d["correct"] = correct
    d["no_answer"] = _strings(df["object_response"]) == NO_ANSWER
    agg = d.groupby(by, sort=False).agg(
        n=("correct", "size"), n_correct=("correct", "sum"), n_no_answer=("no_answer", "sum")
    )
    agg["accuracy"] = agg["n_correct"] / agg["n"]
    per_unit = d.groupby(keys, sort=False)["correct"].mean()
    units = per_unit.groupby(level=list(range(len(by))), sort=False).agg(["mean", "size"])
    agg["unit_mean"] = units["mean"]
    agg["n_units"] = units["size"]
    return agg.reset_index()


def condition_accuracy(
    experiments: Iterable[str] | None = None,
    collections: Sequence[str] = COLLECTIONS,
    root: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """n trials and accuracy per experiment, observer, decision rule and condition.

    Observers: every human (``observer_type`` 'human'), the humans pooled (observer 'humans',
    type 'humans'), every network ('network'). ``rule``: 'sum' (``object_response_sums``) and
    'mean' (``object_response``) for the ImageNet networks; humans and trained networks have one
    answer and appear under both. ``na`` (no answer) counts as wrong.

    Columns: ``collection, experiment, observer, observer_type, rule, condition_index, condition,
    n, n_correct, n_no_answer, accuracy, unit_mean, n_units``. ``unit_mean`` is the aggregation of
    the publication's tables: the mean over observers of their accuracies (humans pooled) or over a
    network's sessions; for one human it is ``accuracy``. With equal trials per unit it equals
    ``accuracy``, as it does in every row of this release.
    """
    wanted = None if experiments is None else set(experiments)
    out = []
    by = ["experiment", "subj", "condition_index", "condition_label"]
    for coll in collections:
        _check_collection(coll)
        df = load(coll, root=root, image_id=False)
        if coll == "dnns":
            df = df[df["subj"].isin(PRETRAINED_NETWORKS)].reset_index(drop=True)
        if wanted is not None:
            df = df[df["experiment"].isin(wanted)].reset_index(drop=True)
        if df.empty:
            continue
        for rule, column in RULES.items():
            correct = _correct(df, column if coll == "dnns" else "object_response")
            # the publication averages a network's sessions, and a human's trials (a human's
            # sessions are not balanced over conditions in the eidolon experiment)
            unit = "subj" if coll == "humans" else "session"
            per_obs = _accuracy_rows(df, correct, by, unit).rename(columns={"subj": "observer"})
            per_obs["observer_type"] = "human" if coll == "humans" else "network"
            frames = [per_obs]
            if coll == "humans":
                pooled = _accuracy_rows(df, correct, [by[0], *by[2:]], "subj")
                pooled["observer"] = "humans"
                pooled["observer_type"] = "humans"
                frames.append(pooled)
            for frame in frames:
                frame["rule"] = rule
                frame["collection"] = coll
                out.append(frame)
    if not out:
        raise HumanDataError(f"no Geirhos trials for experiments {sorted(wanted or [])}")
    res = pd.concat(out, ignore_index=True).rename(columns={"condition_label": "condition"})
    type_order = {"humans": 0, "human": 1, "network": 2}
    coll_order = {c: i for i, c in enumerate(COLLECTIONS)}
    res = res.assign(
        _c=res["collection"].map(coll_order), _t=res["observer_type"].map(type_order)
    ).sort_values(["_c", "experiment", "_t", "observer", "rule", "condition_index"], kind="stable")
    cols = [
        "collection", "experiment", "observer", "observer_type", "rule", "condition_index",
        "condition", "n", "n_correct", "n_no_answer", "accuracy", "unit_mean", "n_units",
    ]  # fmt: skip
    res = res[cols].reset_index(drop=True)
    for c in ("n", "n_correct", "n_no_answer", "n_units", "condition_index"):
        res[c] = res[c].astype("int64")
    return res


#: Columns of ``results/tables/geirhos_conditions.csv``.
CONDITIONS_COLUMNS = (
    "collection", "experiment", "subject", "subject_type", "decision_rule", "condition_index",
    "condition", "n", "n_correct", "n_no_answer", "accuracy",
)  # fmt: skip
#: ``decision_rule`` of the observers with one answer per trial (humans, the trained ResNet-50s
#: with their 16-way output).
RESPONSE_RULE = "response"


def accuracy_table(collections: Sequence[str] = COLLECTIONS) -> pd.DataFrame:
    """Per-condition accuracies of every observer of the release, one row per decision rule.

    The ImageNet networks appear twice: ``decision_rule`` ``sum`` (summed probabilities over a
    class's ImageNet classes, the rule of the publication's figures and accuracy tables) and
    ``mean`` (mean probabilities, the rule VCR-Bench uses for its own models). Humans (each
    observer, and ``subject = "humans"`` pooled) and the trained networks give one answer:
    ``decision_rule = "response"``. Columns :data:`CONDITIONS_COLUMNS`; ``na`` (no answer) is
    wrong.
    """
    acc = condition_accuracy(collections=collections)
    single = acc["collection"] != "dnns"
    # humans and trained networks are listed under both rules with equal values: keep one
    acc = acc[~single | (acc["rule"] == "mean")].copy()
    acc.loc[single, "rule"] = RESPONSE_RULE
    out = acc.rename(
        columns={"observer": "subject", "observer_type": "subject_type", "rule": "decision_rule"}
    )
    return out[list(CONDITIONS_COLUMNS)].reset_index(drop=True)
