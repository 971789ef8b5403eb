"""What the tables of Geirhos et al.'s networks against their humans share: one experiment's humans
as a run has them (:class:`ExperimentHumans`), and the anchor of the networks' curves
(:func:`network_anchor`)."""

from __future__ import annotations

import dataclasses

import pandas as pd

from vcrbench.estimation.storage import HumanEstimate


@dataclasses.dataclass(frozen=True)
class ExperimentHumans:
    """One Geirhos experiment's human reference: ``conditions``, the per-condition Δv table
    (:func:`~vcrbench.humans.mapping.condition_dv`) through which humans and networks are placed;
    ``seed``, the reference's placement seed (:func:`~vcrbench.humans.references.reference_seed`),
    shared by the networks so that their bootstrap replicates pair with the humans'; ``humans``,
    the reference's estimate (its accuracy curve and Δv support: the workflow's curves folder), or
    None to fit the humans here."""

    experiment: str
    conditions: pd.DataFrame
    seed: int
    humans: HumanEstimate | None = None


def network_anchor(anchor: float | str, *, full_signal: bool) -> float | str:
    """The anchor of Geirhos' networks' curves for the references' ``anchor`` (``humans.anchor``).

    The networks never answered the clean image of a trial, so ``auto`` (and ``clean``) resolve
    as ``auto`` does for any trials without clean answers
    (:func:`~vcrbench.humans.curves.accuracy_anchor`): the lab's full-signal condition where the
    networks answered it (``full_signal``: the ImageNet networks, on the colour experiment), else
    the least-manipulated condition (the trained networks never saw unmanipulated images). A
    number, ``full-signal`` or ``zero-condition`` passes through.
    """
    if anchor in ("auto", "clean"):
        return "full-signal" if full_signal else "zero-condition"
    return anchor
