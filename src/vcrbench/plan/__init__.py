"""The plan layer: what a config asks the workflow to build, where, with which settings.

- :mod:`vcrbench.schema` (below it) checks a config's structure and fills every default;
- :mod:`~vcrbench.plan.checks`: what a schema cannot check (names against the registries, files
  that must exist);
- :mod:`~vcrbench.plan.config`, :mod:`~vcrbench.plan.humans`, :mod:`~vcrbench.plan.retrain`,
  :mod:`~vcrbench.plan.figures`: the quantities derived from each block;
- :mod:`~vcrbench.plan.paths`: every output path; :mod:`~vcrbench.plan.resources`: what jobs need;
- :class:`~vcrbench.plan.rules.Plan`: all of it as the rule files use it, its methods grouped by
  stage in :mod:`~vcrbench.plan.facets`.

The workflow (``rules/common.smk``) calls :func:`validate` once at start-up and builds ``PLAN``;
library stages never import this package (they take plain arguments).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import yaml

from vcrbench import schema
from vcrbench.errors import ConfigError
from vcrbench.plan import definitions, paths
from vcrbench.plan.checks import check, check_model_entries_given
from vcrbench.plan.config import canonical
from vcrbench.plan.rules import Plan, alternatives


def validate(config: dict, schema_path: str | Path | None = None) -> dict:
    """Validate ``config`` (schema, then :func:`check`), filling every default in place; raises
    :class:`~vcrbench.errors.ConfigError` naming the key at fault. Returns the config."""
    check_model_entries_given(config)
    schema.validate(config, schema_path)
    check(config)
    return config


def load(path: str | Path | Mapping) -> dict:
    """A config file (or mapping) read and validated (outside Snakemake)."""
    if isinstance(path, Mapping):
        return validate(dict(path))
    path = Path(path)
    try:
        config = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    return validate(config)


__all__ = [
    "ConfigError",
    "Plan",
    "alternatives",
    "canonical",
    "check",
    "definitions",
    "load",
    "paths",
    "validate",
]
