"""Human reference data: ingest, placement on the Δv axis, human curves, and transfer.

- :mod:`~vcrbench.humans.schema`: the trials schema, validation, CSV/Parquet/VCR-export readers.
- :mod:`~vcrbench.humans.geirhos`: the shipped Geirhos et al. (2018) trials (humans and DNNs).
- :mod:`~vcrbench.humans.manipulation`: Geirhos' low-pass stimulus.
- :mod:`~vcrbench.humans.mapping`: Δv of fixed conditions, and placing trials on the Δv axis.
- :mod:`~vcrbench.humans.transfer`: which reference a corruption uses (own / similarity class).
- :mod:`~vcrbench.humans.curves`: human curves through the models' estimator; workflow entry points.
- :mod:`~vcrbench.humans.dnn`: HMRI/MRSI of Geirhos' DNNs against Geirhos' humans.

See docs/humans.md.
"""

from vcrbench.humans.schema import HumanDataError, read_trials, validate_trials
from vcrbench.humans.transfer import HumanReferenceError, resolve_reference

__all__ = [
    "HumanDataError",
    "HumanReferenceError",
    "read_trials",
    "resolve_reference",
    "validate_trials",
]
