"""Trial pairing and error consistency (Cohen's kappa) of Geirhos et al. (2020)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from vcrbench.humans.geirhos_data.experiments import RULES, STIMULUS_KEY
from vcrbench.humans.geirhos_data.store import load, observer_collection
from vcrbench.humans.schema import HumanDataError

#: The release this copy was made from.

# --------------------------------------------------------------------------- error consistency


def error_consistency(correct_a: Sequence[bool], correct_b: Sequence[bool]) -> dict:
    """Cohen's κ of two observers' trial-by-trial correctness (Geirhos, Meding & Wichmann 2020).

    ``c_obs`` is the fraction of trials on which both are right or both wrong, ``c_exp = p_a p_b +
    (1 - p_a)(1 - p_b)`` what independent observers with accuracies ``p_a``, ``p_b`` would reach,
    ``κ = (c_obs - c_exp) / (1 - c_exp)``. Where ``c_obs = 1`` (in particular where ``c_exp = 1``:
    both always right, or both always wrong) κ is 1, as in the authors' code. Returns
    ``{"kappa", "c_obs", "c_exp", "n", "p_a", "p_b"}``.
    """
    a = np.asarray(correct_a)
    b = np.asarray(correct_b)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(
            f"correct_a and correct_b must be 1-d and of equal length ({a.shape}, {b.shape})"
        )
    if a.size == 0:
        raise ValueError("error consistency of zero trials is undefined")
    for name, x in (("correct_a", a), ("correct_b", b)):
        if x.dtype != bool and not np.isin(x, (0, 1)).all():
            raise ValueError(f"{name} must be booleans (or 0/1)")
    a = a.astype(bool)
    b = b.astype(bool)
    p_a, p_b = float(a.mean()), float(b.mean())
    c_exp = p_a * p_b + (1.0 - p_a) * (1.0 - p_b)
    c_obs = float((a == b).mean())
    kappa = 1.0 if c_obs == 1.0 else (c_obs - c_exp) / (1.0 - c_exp)
    return {
        "kappa": kappa,
        "c_obs": c_obs,
        "c_exp": c_exp,
        "n": int(a.size),
        "p_a": p_a,
        "p_b": p_b,
    }


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
        side = pd.DataFrame({k: df[k].astype(str).to_numpy() for k in on})
        side["category"] = df["category"].astype(str).to_numpy()
        side[f"file_{tag}"] = df["file"].astype(str).to_numpy()
        side[f"trial_{tag}"] = df["trial"].to_numpy(np.int64)
        side[f"response_{tag}"] = df[column].astype(str).to_numpy()
        side[f"correct_{tag}"] = side[f"response_{tag}"].to_numpy() == side["category"].to_numpy()
        sides.append(side)
    pairs = sides[0].merge(sides[1], on=list(on), how="inner", suffixes=("", "_b"), validate="1:1")
    mismatch = pairs["category"] != pairs["category_b"]
    if mismatch.any():
        raise HumanDataError(f"{int(mismatch.sum())} paired trials disagree on the true category")
    pairs = pairs.drop(columns="category_b").sort_values(list(on), kind="stable")
    return pairs.reset_index(drop=True)


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
