"""A human reference as the stages take it: typed, built by the plan layer from its config entry.

:func:`vcrbench.plan.humans.reference_of` reads an entry of ``humans.references`` (and names the
config key of anything wrong in it); the stages (:mod:`vcrbench.humans.stages`,
:mod:`vcrbench.humans.geirhos.stages`) read only the fields of :class:`HumanReference`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from vcrbench import seeding

#: The shipped data of Geirhos et al. (2018), one of its experiments.
GEIRHOS2018 = "geirhos2018"
#: A user's trials file (:func:`vcrbench.humans.trial_schema.read_trials`).
TRIALS = "trials"
REFERENCE_KINDS = (GEIRHOS2018, TRIALS)


@dataclasses.dataclass(frozen=True)
class HumanReference:
    """One human reference.

    ``kind``: :data:`GEIRHOS2018` (``experiment``, and ``root``: where the release's data lie, None
    for the copy shipped in the package) or :data:`TRIALS` (``path``: the trials file);
    ``corruption``: the corruption its trials hold; ``entry``: its config entry as given, recorded
    with the trials it makes.
    """

    name: str
    kind: str
    corruption: str
    experiment: str | None
    root: str | None
    path: str | None
    entry: Mapping

    @property
    def is_geirhos(self) -> bool:
        """Whether the trials are Geirhos et al.'s (the lab's full-signal condition exists)."""
        return self.kind == GEIRHOS2018

    def seed(self, root_seed: int) -> int:
        """The placement/estimation seed of this reference (:func:`reference_seed`)."""
        return reference_seed(root_seed, self.name)


def reference_seed(seed: int, reference: str) -> int:
    """The placement/estimation seed of one reference: ``derive_seed(seed, "humans", reference)``;
    Geirhos' networks on a reference's experiment are placed with it too, so that their bootstrap
    replicates pair with the humans'."""
    return seeding.derive_seed(seed, "humans", reference)


def geirhos_references(references: Mapping[str, HumanReference]) -> list[HumanReference]:
    """The :data:`GEIRHOS2018` references among ``references``, in name order."""
    return [ref for _, ref in sorted(references.items()) if ref.is_geirhos]
