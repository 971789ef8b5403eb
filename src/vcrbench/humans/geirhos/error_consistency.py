"""Error consistency of Geirhos et al.'s networks with the humans, per condition on the Δv axis.

Geirhos, Meding & Wichmann (NeurIPS 2020) measure trial-by-trial agreement beyond what two
observers' accuracies predict: Cohen's κ = (c_obs − c_exp) / (1 − c_exp) of "both right or both
wrong" over trials that both answered (:func:`vcrbench.kappa.error_consistency`).
In the 2018 release a trial's stimulus is identified by its source image and condition; the
networks answered one stimulus set of their own, so each human shares only a few dozen (image,
condition) pairs with them (subject-02 and -03 share many with each other in the colour and
false-colour experiments). Those pairs, pooled over the humans, give κ per condition
(``kappa_pooled``); each condition sits on the Δv axis at the median Δv it produces on this run's
images (its bin of Alg. 1 beside it). Every value states ``n_pairs``, the shared trials it rests
on: with tens of pairs per condition, κ is a rough number.

The published convention (Geirhos et al. 2020; bethgelab/model-vs-human) is κ of each
human–network pair, averaged over the humans (``kappa_pair_mean``,
:func:`vcrbench.kappa.pair_mean_kappa`): right where each pair shares a whole condition's trials.
Here a pair shares 1–12 trials of a condition in the 8-level experiments (``pair_trials_min``,
``pair_trials_max``), where one trial gives κ = 1 (agreement) or 0, so the pooled value is the
stable one; both are reported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from vcrbench.bins import bin_index
from vcrbench.humans import geirhos as gd
from vcrbench.humans.mapping import summarise
from vcrbench.kappa import error_consistency, pair_mean_kappa

TABLE_COLUMNS = (
    "experiment", "network", "rule", "condition", "dv_median", "bin", "n_pairs", "n_humans",
    "p_humans", "p_network", "c_obs", "c_exp", "kappa_pooled", "kappa_pair_mean", "pair_trials_min",
    "pair_trials_max",
)  # fmt: skip


def human_network_pairs(
    experiment: str, network: str, rule: str = "mean", humans: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Every (human, ``network``) pair of trials on the same stimulus, with the human's name
    (``humans``: the experiment's human trials, ``gd.load("humans", experiment)``, if loaded)."""
    humans = gd.load("humans", experiment) if humans is None else humans
    net = gd.load("dnns", experiment, [network])
    frames = []
    for subject, trials in humans.groupby("subj", observed=True, sort=True):
        pairs = gd.pair_trials(trials, net, rule_a="mean", rule_b=rule)
        frames.append(pairs.assign(human=str(subject)))
    return pd.concat(frames, ignore_index=True)


def consistency_by_condition(
    experiment: str,
    conditions_dv: pd.DataFrame,
    *,
    n_bins: int,
    networks: Sequence[str] = gd.PRETRAINED_NETWORKS,
    rule: str = "mean",
) -> pd.DataFrame:
    """κ of each network with the humans per condition: over the trials pooled over the humans
    (``kappa_pooled``), and the mean of each human's κ (``kappa_pair_mean``, the published
    convention) with the fewest and most trials a human shares (``pair_trials_min/max``).

    ``conditions_dv`` is the experiment's :func:`~vcrbench.humans.mapping.condition_dv` table
    (its condition strings are the release's); ``bin`` is the condition's median Δv's bin of
    ``n_bins`` (``estimation.bins``). Conditions without a shared trial are left out.
    """
    medians = summarise(conditions_dv).set_index("condition")["dv_median"]
    rows = []
    humans = gd.load("humans", experiment)  # once for every network
    for network in networks:
        pairs = human_network_pairs(experiment, network, rule, humans)
        for condition, g in pairs.groupby("condition_label", sort=False, observed=True):
            a, b = g["correct_a"].to_numpy(), g["correct_b"].to_numpy()
            r = error_consistency(a, b)
            per_pair = pair_mean_kappa(a, b, g["human"].to_numpy())
            dv = float(medians.get(str(condition), np.nan))
            rows.append(
                {
                    "experiment": experiment, "network": network, "rule": rule,
                    "condition": str(condition), "dv_median": dv,
                    "bin": int(bin_index(np.array([dv]), n_bins)[0]) if np.isfinite(dv) else -1,
                    "n_pairs": r["n"], "n_humans": int(g["human"].nunique()),
                    "p_humans": r["p_a"], "p_network": r["p_b"], "c_obs": r["c_obs"],
                    "c_exp": r["c_exp"], "kappa_pooled": r["kappa"],
                    "kappa_pair_mean": per_pair["kappa_pair_mean"],
                    "pair_trials_min": per_pair["n_min"], "pair_trials_max": per_pair["n_max"],
                }
            )  # fmt: skip
    out = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    return out.sort_values(["network", "dv_median"], kind="stable").reset_index(drop=True)


def consistency_table(
    conditions: Mapping[str, pd.DataFrame], *, n_bins: int, rule: str = "mean"
) -> pd.DataFrame:
    """:func:`consistency_by_condition` of every experiment in ``conditions`` (experiment -> its
    conditions' Δv table), one table."""
    frames = [
        consistency_by_condition(exp, cdv, rule=rule, n_bins=n_bins)
        for exp, cdv in conditions.items()
    ]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=TABLE_COLUMNS)
