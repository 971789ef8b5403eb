"""A config block's dataset kind (``dataset``, ``retrain.pool``) found in the registry
(:mod:`vcrbench.datasets.kinds`), with what the kind needs of the block checked before any job."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from vcrbench.datasets.kinds import pool_kinds, unknown_kind
from vcrbench.errors import ConfigError

if TYPE_CHECKING:
    from vcrbench.datasets.kinds import DatasetKind


def dataset_kind(block: Mapping, where: str = "dataset", needs: bool = True) -> DatasetKind:
    """The registered dataset kind (:mod:`vcrbench.datasets.kinds`) of config block ``block``
    (``where``: ``dataset`` or ``retrain.pool``, which takes the kinds that can be the pool
    only), with (``needs``) what the block needs for it checked: its ``path``, its ``labels``,
    the kind's own check. A ConfigError names the key at fault."""
    from vcrbench.datasets.loading import DATASET_KINDS  # the built-in kinds registered

    name, pool = block["kind"], where != "dataset"
    if name not in DATASET_KINDS:
        known = pool_kinds() if pool else None
        raise ConfigError(f"config key '{where}.kind': {unknown_kind(name, known)}")
    kind = DATASET_KINDS[name]
    if pool and not kind.pool:
        raise ConfigError(
            f"config key '{where}.kind': dataset kind {name!r} cannot be the retraining pool; "
            f"pool kinds: {', '.join(pool_kinds())}"
        )
    for key, problem in kind.needs(block, where) if needs else ():
        raise ConfigError(f"config key '{where}.{key}': {problem}")
    return kind
