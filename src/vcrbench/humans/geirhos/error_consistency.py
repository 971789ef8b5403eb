"""Error consistency of Geirhos et al.'s networks with the humans, per condition on the Δv axis.

Geirhos, Meding & Wichmann (NeurIPS 2020) measure trial-by-trial agreement beyond what two
observers' accuracies predict: Cohen's κ = (c_obs − c_exp) / (1 − c_exp) of "both right or both
wrong" over trials that both answered (:func:`vcrbench.kappa.error_consistency`).
In the 2018 release a trial's stimulus is identified by its source image and condition; the
networks answered one stimulus set of their own, so each human shares only a few dozen (image,
condition) pairs with them (subject-02 and -03 share many with each other in the colour and
false-colour experiments). Those pairs, pooled over the humans, give κ per condition; each
condition sits on the Δv axis at the median Δv it produces on this run's images (its bin of
Alg. 1 beside it). Every value states ``n_pairs``, the shared trials it rests on: with tens of
pairs per condition, κ is a rough number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from vcrbench.bins import bin_index
from vcrbench.humans import geirhos as gd
from vcrbench.humans.mapping import summarise
from vcrbench.kappa import error_consistency

TABLE_COLUMNS = (
    "experiment", "network", "rule", "condition", "dv_median", "bin", "n_pairs", "n_humans",
    "p_humans", "p_network", "c_obs", "c_exp", "kappa",
)  # fmt: skip


def human_network_pairs(experiment: str, network: str, rule: str = "mean") -> pd.DataFrame:
    """Every (human, ``network``) pair of trials on the same stimulus, with the human's name."""
    humans = gd.load("humans", experiment)
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
    networks: Sequence[str] = gd.PRETRAINED_NETWORKS,
    rule: str = "mean",
    n_bins: int = 40,
) -> pd.DataFrame:
    """κ of each network with the humans (pairs pooled over humans), per condition.

    ``conditions_dv`` is the experiment's :func:`~vcrbench.humans.mapping.condition_dv` table
    (its condition strings are the release's). Conditions without a shared trial are left out.
    """
    medians = summarise(conditions_dv).set_index("condition")["dv_median"]
    rows = []
    for network in networks:
        pairs = human_network_pairs(experiment, network, rule)
        for condition, g in pairs.groupby("condition_label", sort=False, observed=True):
            r = error_consistency(g["correct_a"].to_numpy(), g["correct_b"].to_numpy())
            dv = float(medians.get(str(condition), np.nan))
            rows.append(
                {
                    "experiment": experiment, "network": network, "rule": rule,
                    "condition": str(condition), "dv_median": dv,
                    "bin": int(bin_index(np.array([dv]), n_bins)[0]) if np.isfinite(dv) else -1,
                    "n_pairs": r["n"], "n_humans": int(g["human"].nunique()),
                    "p_humans": r["p_a"], "p_network": r["p_b"], "c_obs": r["c_obs"],
                    "c_exp": r["c_exp"], "kappa": r["kappa"],
                }
            )  # fmt: skip
    out = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    return out.sort_values(["network", "dv_median"], kind="stable").reset_index(drop=True)


def consistency_table(
    conditions: Mapping[str, pd.DataFrame], *, rule: str = "mean", n_bins: int = 40
) -> pd.DataFrame:
    """:func:`consistency_by_condition` of every experiment in ``conditions`` (experiment -> its
    conditions' Δv table), one table."""
    frames = [
        consistency_by_condition(exp, cdv, rule=rule, n_bins=n_bins)
        for exp, cdv in conditions.items()
    ]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=TABLE_COLUMNS)
