"""Human reference data: ingest, placement on the Δv axis, human curves, and transfer.

- :mod:`~vcrbench.humans.trial_schema`: the trials schema, validation, CSV/Parquet/VCR-export
  readers.
- :mod:`~vcrbench.humans.geirhos`: everything of Geirhos et al. (2018): the shipped data (humans,
  ImageNet networks, trained networks), their reader, the networks against the humans, κ, and
  the workflow entry points of its tables (:mod:`~vcrbench.humans.geirhos.stages`).
- :mod:`~vcrbench.humans.references`: a human reference, typed (the plan layer reads it from the
  config).
- :mod:`~vcrbench.humans.manipulation`: Geirhos' low-pass stimulus.
- :mod:`~vcrbench.humans.mapping`: Δv of fixed conditions, and placing trials on the Δv axis.
- :mod:`~vcrbench.humans.transfer`: which reference a corruption uses (own / similarity class).
- :mod:`~vcrbench.humans.curves`: human curves through the models' estimator, and how they are
  fitted (:class:`~vcrbench.humans.curves.HumanFit`).
- :mod:`~vcrbench.humans.screening`: the screening experiment (binomial test per pair).
- :mod:`~vcrbench.humans.stages`: the workflow's entry points of each reference.

See docs/humans.md.
"""

from vcrbench.humans.transfer import HumanReferenceError, resolve_reference
from vcrbench.humans.trial_schema import HumanDataError, read_trials, validate_trials

__all__ = [
    "HumanDataError",
    "HumanReferenceError",
    "read_trials",
    "resolve_reference",
    "validate_trials",
]
