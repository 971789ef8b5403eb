"""Trial pairing of Geirhos et al. (2020): two observers' trials on the same stimulus, and their
error consistency (:func:`vcrbench.kappa.error_consistency`) per group of trials."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from vcrbench.humans.geirhos.experiments import RULES, STIMULUS_KEY
from vcrbench.humans.geirhos.store import load, observer_collection
from vcrbench.humans.trial_schema import HumanDataError
from vcrbench.kappa import error_consistency


def pair_trials(
    trials_a: pd.DataFrame,
    trials_b: pd.DataFrame,
    rule_a: str = "mean",
    rule_b: str = "mean",
    on: Sequence[str] = STIMULUS_KEY,
) -> pd.DataFrame:
    """Trials of two observers on the same stimulus, one row per pair.

    ``trials_a``/``trials_b`` are rows of :func:`load` (one observer each). A stimulus is
    identified by :data:`STIMULUS_KEY` (source image and condition): ``imagename`` never matches
    across observers (it carries the trial number and the observer's code), and the release keeps
    no noise seeds, so for the random manipulations (uniform noise, phase noise, eidolon) a shared
    key means the same image and condition, not necessarily the same pixels; in the first batch
    humans saw the 256 px stimulus and networks its 224 px centre crop. ``rule_*`` picks the
    networks' decision (:data:`RULES`); it is ignored where the column is absent.

    Returns columns ``*on, category, file_a, trial_a, response_a, correct_a, file_b, trial_b,
    response_b, correct_b``, sorted by ``on``.
    """
    sides = []
    for tag, df, rule in (("a", trials_a, rule_a), ("b", trials_b, rule_b)):
        if rule not in RULES:
            raise HumanDataError(f"rule must be one of {tuple(RULES)}, not {rule!r}")
        if df["subj"].nunique() > 1:
            raise HumanDataError(
                f"trials_{tag} hold several observers: {sorted(df['subj'].unique())}"
            )
        dup = df.duplicated(list(on))
        if dup.any():
            raise HumanDataError(
                f"trials_{tag}: stimulus key {tuple(on)} is not unique ({int(dup.sum())} repeats)"
            )
        column = RULES[rule] if RULES[rule] in df else "object_response"
        side = pd.DataFrame({k: _text(df[k]) for k in on})
        side["category"] = _text(df["category"])
        side[f"file_{tag}"] = _text(df["file"])
        side[f"trial_{tag}"] = df["trial"].to_numpy(np.int64)
        side[f"response_{tag}"] = _text(df[column])
        side[f"correct_{tag}"] = side[f"response_{tag}"].to_numpy() == side["category"].to_numpy()
        sides.append(side)
    pairs = sides[0].merge(sides[1], on=list(on), how="inner", suffixes=("", "_b"), validate="1:1")
    mismatch = pairs["category"] != pairs["category_b"]
    if mismatch.any():
        raise HumanDataError(f"{int(mismatch.sum())} paired trials disagree on the true category")
    pairs = pairs.drop(columns="category_b").sort_values(list(on), kind="stable")
    return pairs.reset_index(drop=True)


def _text(column: pd.Series) -> np.ndarray:
    """``column.astype(str).to_numpy()``; for a categorical column without missing values, its
    categories' text picked by code (the same strings, without converting every row)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()
        if not (codes < 0).any():
            return column.cat.categories.astype(str).to_numpy(dtype=object)[codes]
    return column.astype(str).to_numpy()


def paired_trials(
    experiment: str,
    observer_a: str,
    observer_b: str,
    rule: str = "mean",
    experiment_b: str | None = None,
    root: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """:func:`pair_trials` of two observers (humans, ImageNet or trained networks) by name.

    ``experiment_b`` (default: ``experiment``) pairs across folders with the same stimuli, e.g. a
    trained network on ``noise-png`` with an ImageNet network on ``noise``.
    """
    a = load(observer_collection(observer_a), experiment, [observer_a], root)
    b = load(observer_collection(observer_b), experiment_b or experiment, [observer_b], root)
    return pair_trials(a, b, rule, rule)


def consistency_table(
    pairs: pd.DataFrame, by: Sequence[str] = ("condition_label",)
) -> pd.DataFrame:
    """:func:`error_consistency` of paired trials (:func:`pair_trials`) per group of ``by``.

    Columns ``*by, n, p_a, p_b, c_obs, c_exp, kappa``, groups in order of first appearance.
    """
    rows = []
    for key, g in pairs.groupby(list(by), sort=False, observed=True):
        r = error_consistency(g["correct_a"].to_numpy(), g["correct_b"].to_numpy())
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                **{k: r[k] for k in ("n", "p_a", "p_b", "c_obs", "c_exp", "kappa")},
            }
        )
    return pd.DataFrame(rows, columns=[*by, "n", "p_a", "p_b", "c_obs", "c_exp", "kappa"])
