"""Human curves s_h through the models' estimator, and their files.

:func:`human_estimates` fits one curve per property with :func:`vcrbench.estimation.estimate`,
the estimator of every model curve, and returns a
:class:`~vcrbench.estimation.storage.HumanEstimate`, which
:func:`~vcrbench.estimation.storage.write_human_estimate` /
:func:`~vcrbench.estimation.storage.read_human_estimate` store as
``{bins,curves,summary,replicates}.parquet`` (the workflow: ``results/humans/{reference}/``).

Uncertainty. Trials placed by condition get their Δv from
:func:`~vcrbench.humans.mapping.assign_dv`; each bootstrap replicate b redraws those Δv values
(after resampling the clean-set images of each condition) *and* resamples participants, refitting
with the penalty chosen on the point estimate (:func:`vcrbench.estimation.bootstrap` with one
replicate), then finishes like every estimate
(:func:`vcrbench.estimation.estimate.with_replicates`). So the band carries both the
between-participant variability and the uncertainty of where a condition lies on the Δv axis.
Replicate b of every observer of one experiment uses the same image resample, so that a paired
comparison (:func:`vcrbench.estimation.metrics.compare`) compares curves on the same Δv axis.

Anchor s(0). ``accuracy``: the trials' clean-image accuracy where clean answers were recorded;
else (Geirhos) the accuracy in the *zero condition* (w = 0 or σ = 0: the least-manipulated
stimulus of the experiment), resampled with the participants; or a number from the config.
``consistency``: the humans' own consistency on the clean image, the share of trials at Δv = 0
(the clean image shown again) whose answer equals the recorded clean answer, resampled with the
participants. People are not deterministic, so s_p(0) is not pinned at 1 (the paper's human s_p
lies below the models' at small Δv); where no trial at Δv = 0 gives it, there is no human s_p
(``skipped`` says why). Only trials with a recorded clean answer enter it; Geirhos' trials have
none, so references built from them have an accuracy curve only.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from vcrbench import schema as config_schema
from vcrbench import seeding
from vcrbench.estimation.estimate import with_replicates
from vcrbench.estimation.storage import HumanEstimate
from vcrbench.humans import mapping, trial_schema
from vcrbench.humans.trial_schema import HumanDataError
from vcrbench.settings import EstimationSettings
from vcrbench.vocab import HUMAN_LABEL_SPACE, PROPERTY_NAMES, param_columns_of

PROPERTIES = PROPERTY_NAMES


# --------------------------------------------------------------------------- anchors

CLEAN_ANCHOR = "clean-image accuracy"
FULL_SIGNAL_ANCHOR = "full-signal accuracy (same lab, unmanipulated images)"
#: Anchors that are data at Δv = 0 (the support of such a reference starts at 0).
ANCHORS_AT_ZERO = (CLEAN_ANCHOR, FULL_SIGNAL_ANCHOR)
#: Why a reference with clean answers has no s_p: nothing measures s_p(0) for people.
NO_CLEAN_CONSISTENCY = (
    "no trial at Δv = 0 (the clean image shown again) gives the humans' own consistency s_p(0); "
    "people are not deterministic, so it is not pinned at 1"
)

log = logging.getLogger(__name__)


def zero_condition(trials: pd.DataFrame) -> str:
    """The least-manipulated condition: parameters nearest the corruption's identity (all
    ``param.*`` = 0 in Geirhos' noise and low-pass data, contrast 1 in the contrast experiment)."""
    placed = trials[np.isnan(trials["dv"].to_numpy())]
    pcols = param_columns_of(placed)
    if placed.empty or not pcols:
        raise HumanDataError("no trials with a condition and param.* columns: no zero condition")
    conds = placed[["corruption", "condition", *pcols]].drop_duplicates("condition")
    order = np.lexsort([mapping.identity_distance(conds, c) for c in reversed(pcols)])
    return str(conds.iloc[order[0]]["condition"])


def accuracy_anchor(
    trials: pd.DataFrame,
    anchor: float | str,
    full_signal: pd.DataFrame | None = None,
):
    """``(anchor0, anchor_groups, description)`` for :func:`vcrbench.estimation.estimate`.

    ``anchor`` (``humans.anchor``, :attr:`HumanFit.anchor`): a number in [0, 1]; ``"clean"``
    (accuracy on the clean image, needs recorded clean answers); ``"full-signal"`` (accuracy in
    ``full_signal``, trials of the same lab on unmanipulated images, e.g. Geirhos' colour
    experiment's colour condition: data really at Δv = 0, resampled by their participants);
    ``"zero-condition"`` (accuracy in the
    least-manipulated condition, stretched to Δv = 0: used only when asked for, or by ``"auto"``
    when nothing at Δv = 0 exists, and then the reference's support leaves [0, lo] out);
    ``"auto"``: clean if recorded for every trial, else full-signal if given, else
    zero-condition.
    """
    if not isinstance(anchor, str):
        value = float(anchor)
        if not 0.0 <= value <= 1.0:
            raise HumanDataError(f"accuracy anchor must lie in [0, 1], got {value}")
        return value, None, f"fixed {value:g}"
    has_clean = trials["clean_response"].to_numpy() != trial_schema.NOT_RECORDED
    if anchor == "auto":
        if has_clean.all():
            anchor = "clean"
        else:
            anchor = "full-signal" if full_signal is not None else "zero-condition"
    if anchor == "full-signal":
        if full_signal is None or full_signal.empty:
            raise HumanDataError(
                "accuracy anchor 'full-signal' needs the same lab's trials on unmanipulated "
                "images (for Geirhos references: the colour experiment's colour condition)"
            )
        return (
            trial_schema.correct(full_signal).astype(np.float64),
            ("full-signal:" + full_signal["participant"].astype(str)).to_numpy(),
            FULL_SIGNAL_ANCHOR,
        )
    if anchor == "clean":
        if not has_clean.any():
            raise HumanDataError(
                "accuracy anchor 'clean' needs trials with a recorded clean_response"
            )
        sub = trials[has_clean]
        clean = sub["clean_response"].to_numpy()
        outcomes = (clean == sub["label"].to_numpy()) & (clean != trial_schema.NO_ANSWER)
        # one clean answer per participant and image (a trial table repeats it per condition)
        frame = pd.DataFrame(
            {"p": sub["participant"].to_numpy(), "i": sub["image_id"].to_numpy(), "y": outcomes}
        ).drop_duplicates(["p", "i"])
        return frame["y"].to_numpy(np.float64), frame["p"].to_numpy(), CLEAN_ANCHOR
    if anchor == "zero-condition":
        cond = zero_condition(trials)
        sub = trials[trials["condition"] == cond]
        return (
            trial_schema.correct(sub).astype(np.float64),
            sub["participant"].to_numpy(),
            f"accuracy in the zero condition {cond!r}",
        )
    raise HumanDataError(
        "accuracy anchor must be a number, 'auto', 'clean', 'full-signal' or 'zero-condition', "
        f"not {anchor!r}"
    )


# --------------------------------------------------------------------------- support

#: Quantiles of a condition's Δv distribution that bound a reference's support.
SUPPORT_QUANTILES = (0.05, 0.95)


def dv_support(
    trials: pd.DataFrame, conditions: pd.DataFrame | None, *, from_zero: bool
) -> tuple[float, float, str]:
    """``(lo, hi, rule)``: the Δv range where a reference has data.

    Trials placed by condition contribute the 5% and 95% quantiles of their condition's measured
    Δv distribution on the clean set; trials with their own Δv contribute the same quantiles of
    those values. ``lo`` is the smallest lower quantile, ``hi`` the largest upper one. With data
    really at Δv = 0 (``from_zero``: recorded clean-image answers, or the same lab's
    full-signal condition as the anchor), the support starts at 0.
    """
    q_lo, q_hi = SUPPORT_QUANTILES
    los, his = [], []
    dv = trials["dv"].to_numpy(np.float64)
    own = dv[~np.isnan(dv)]
    if own.size:
        los.append(float(np.quantile(own, q_lo)))
        his.append(float(np.quantile(own, q_hi)))
    placed = trials.loc[np.isnan(dv), ["corruption", "condition"]].drop_duplicates()
    if len(placed):
        if conditions is None:
            raise HumanDataError("trials without a Δv need the conditions table for their support")
        keyed = conditions.set_index(["corruption", "condition"])["dv"]
        for corruption, condition in placed.itertuples(index=False):
            values = keyed.loc[(corruption, condition)].to_numpy(np.float64)
            los.append(float(np.quantile(values, q_lo)))
            his.append(float(np.quantile(values, q_hi)))
    if not los:
        raise HumanDataError("no trials: no Δv support")
    lo, hi = (0.0 if from_zero else min(los)), max(his)
    if hi <= lo:  # a single point of data: widen to the two grid points around it
        hi = min(1.0, lo + 1e-3)
        lo = max(0.0, hi - 2e-3)
    rule = (
        f"{'0 (data at Δv = 0)' if from_zero else f'min q{round(q_lo * 100):02d}'} to "
        f"max q{round(q_hi * 100)} of the conditions' Δv"
    )
    return lo, hi, rule


# --------------------------------------------------------------------------- estimation


def _estimate_one(
    trials: pd.DataFrame,
    outcomes: np.ndarray,
    anchor0,
    anchor_groups,
    conditions: pd.DataFrame | None,
    *,
    seed: int,
    placement_seed: int,
    placement: str,
    groups: str | None,
    settings: Mapping,
    desc: str,
):
    from vcrbench import estimation

    # The human data are 16-way forced choice: chance (anchor1: chance) is 1/16.
    est = EstimationSettings.of_config(settings).for_label_space(HUMAN_LABEL_SPACE, anchor0)
    n_boot = est.n_boot
    group_labels = trials[groups].to_numpy() if groups else None
    anchor_groups = anchor_groups if groups else None
    needs_placement = np.isnan(trials["dv"].to_numpy()).any()
    if needs_placement and conditions is None:
        raise HumanDataError("trials without a Δv need the conditions table (condition_dv)")

    if needs_placement:  # the grouping of trials by condition, once for every replicate
        place = mapping.dv_placer(trials, conditions, placement_seed, placement)

    def dv_of(replicate: int) -> np.ndarray:
        if not needs_placement:
            return trials["dv"].to_numpy(np.float64)
        return place(replicate)

    if not needs_placement or placement == "median":
        # Δv does not change between replicates: the estimator's own bootstrap is the whole story.
        return estimation.estimate(
            dv_of(0), outcomes, anchor0, est, seed=seed, groups=group_labels,
            anchor_groups=anchor_groups,
        )  # fmt: skip
    point = estimation.estimate(
        dv_of(0), outcomes, anchor0, dataclasses.replace(est, n_boot=0), seed=seed,
        groups=group_labels, anchor_groups=anchor_groups,
    )  # fmt: skip
    # A single bootstrap replicate at a time, with the point estimate's penalty.
    one = dataclasses.replace(est, n_boot=1)
    reps = np.empty((n_boot, len(point.grid)), dtype=np.float32)
    rep_groups, rep_anchor_groups = _label_codes(group_labels, anchor_groups)
    for b in tqdm(range(n_boot), desc=f"{desc}: bootstrap", unit="rep", mininterval=2.0):
        reps[b] = estimation.bootstrap(
            dv_of(b + 1), outcomes, anchor0, one, lam=point.lam,
            seed=seeding.derive_seed(seed, "humans-bootstrap", b), groups=rep_groups,
            anchor_groups=rep_anchor_groups,
        )[0]  # fmt: skip
    return with_replicates(point, reps, est)


def _label_codes(groups, anchor_groups) -> tuple:
    """Cluster labels of the samples and of the anchor's outcomes as integer codes in the labels'
    sorted order, coded together: the bootstrap resamples them exactly as it does the labels (it
    codes them so itself), and checks and codes integers faster in each of its per-replicate
    calls. The point estimate has already checked the labels."""
    if groups is None:
        return None, anchor_groups
    labels = pd.Series(groups)
    if anchor_groups is not None:
        labels = pd.concat([labels, pd.Series(anchor_groups)], ignore_index=True)
    codes = pd.factorize(labels, sort=True)[0]
    n = len(groups)
    return codes[:n], (None if anchor_groups is None else codes[n:])


def human_estimates(
    trials: pd.DataFrame,
    conditions: pd.DataFrame | None,
    fit: HumanFit,
    seed: int,
    *,
    name: str,
    groups: str | None = "participant",
    properties: tuple[str, ...] = PROPERTIES,
    full_signal: pd.DataFrame | None = None,
) -> HumanEstimate:
    """Human curves s_h (accuracy, and consistency where clean answers exist) of one reference.

    Parameters
    ----------
    trials : DataFrame
        Canonical trials (:mod:`~vcrbench.humans.trial_schema`).
    conditions : DataFrame or None
        :func:`~vcrbench.humans.mapping.condition_dv` output; needed if any trial lacks a Δv.
    fit : HumanFit
        The config's ``estimation`` block (``settings``: ``bins, min_count, n_boot, level,
        weighting, lam, n_folds, grid_size, anchor1, bootstrap_penalty, small_sample``), the
        accuracy ``anchor`` (:func:`accuracy_anchor`) and the ``placement`` of trials of a
        condition on the Δv axis (:func:`~vcrbench.humans.mapping.assign_dv`).
    seed : int
        Root seed: the placement draws use ``seed`` (shared by every observer of a reference, so
        that replicates pair), the estimator ``derive_seed(seed, "humans", name, property)``.
    name : str
        Label used in seeds and progress bars (the reference's name).
    full_signal : DataFrame or None
        The same lab's trials on unmanipulated images, for the ``full-signal`` anchor.
    groups : str or None
        Column whose values the bootstrap resamples as clusters (``participant``); None resamples
        trials (e.g. for one deterministic network).
    properties : tuple
        Which of ``accuracy``, ``consistency`` to estimate (consistency is skipped, not an
        error, when no trial has a clean answer).

    Returns
    -------
    HumanEstimate
        ``curves`` ``{property: vcrbench.estimation.Estimate}``, ``anchor`` (how s_a(0) was set)
        and ``support`` (:func:`dv_support` of each curve).
    """
    unknown = sorted(set(properties) - set(PROPERTIES))
    if unknown:
        raise ValueError(f"unknown properties {unknown}; known: {PROPERTIES}")
    out: dict = {}
    anchor_how = None
    support: dict = {}
    skipped: dict = {}
    common = {
        "conditions": conditions,
        "placement_seed": seed,
        "placement": fit.placement,
        "groups": groups,
        "settings": fit.settings,
    }
    if "accuracy" in properties:
        a0, a_groups, how = accuracy_anchor(trials, fit.anchor, full_signal)
        at_zero = how in ANCHORS_AT_ZERO
        out["accuracy"] = _estimate_one(
            trials, trial_schema.correct(trials).astype(np.float64), a0, a_groups,
            seed=seeding.derive_seed(seed, "humans", name, "accuracy"), desc=f"{name} accuracy",
            **common,
        )  # fmt: skip
        anchor_how = how
        support["accuracy"] = dv_support(trials, conditions, from_zero=at_zero)
    if "consistency" in properties:
        _consistency(trials, seed, name, common, out, support, skipped)
    return HumanEstimate(curves=out, anchor=anchor_how, support=support, skipped=skipped)


@dataclasses.dataclass(frozen=True)
class HumanFit:
    """How the curves of a human reference, and of Geirhos' networks against it, are fitted: the
    config's ``estimation`` block (``settings``, completed with the schema's defaults), its
    ``humans.anchor`` and ``humans.placement`` (the plan passes them; nothing here defaults)."""

    settings: Mapping
    anchor: float | str
    placement: str

    def __post_init__(self):
        object.__setattr__(
            self, "settings", config_schema.validate_block("estimation", self.settings)
        )

    def estimate(
        self, trials: pd.DataFrame, conditions: pd.DataFrame | None, seed: int, **kwargs
    ) -> HumanEstimate:
        """:func:`human_estimates` of ``trials`` with these settings, anchor and placement."""
        return human_estimates(trials, conditions, self, seed, **kwargs)


def _consistency(trials, seed, name, common, out, support, skipped) -> None:
    """The human consistency curve s_p into ``out`` and its support into ``support``, where
    trials hold clean answers: anchored at the humans' own consistency on the clean image shown
    again, or, with no such trial, left out with its reason in ``skipped``."""
    cons, has = trial_schema.consistent(trials)
    at_zero = has & (trials["dv"].to_numpy(np.float64) == 0.0)
    if has.any() and not at_zero.any():
        skipped["consistency"] = NO_CLEAN_CONSISTENCY
        log.warning("%s: no human s_p: %s", name, NO_CLEAN_CONSISTENCY)
    elif has.any():
        sub = trials[has & ~at_zero].reset_index(drop=True)
        anchor_groups = trials.loc[at_zero, "participant"].to_numpy()
        out["consistency"] = _estimate_one(
            sub, cons[has & ~at_zero].astype(np.float64), cons[at_zero].astype(np.float64),
            anchor_groups, seed=seeding.derive_seed(seed, "humans", name, "consistency"),
            desc=f"{name} consistency", **common,
        )  # fmt: skip
        # Consistency compares with the recorded clean answer: data at Δv = 0.
        support["consistency"] = dv_support(sub, common["conditions"], from_zero=True)
