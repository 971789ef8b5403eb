"""The plan layer: what a config asks the workflow to build, where, with which settings.

- :mod:`vcrbench.schema` (below it) checks a config's structure and fills every default;
- :mod:`~vcrbench.plan.checks`: what a schema cannot check (names against the registries, files
  that must exist);
- :mod:`~vcrbench.plan.config`, :mod:`~vcrbench.plan.humans`, :mod:`~vcrbench.plan.retrain`,
  :mod:`~vcrbench.plan.figures`: the quantities derived from each block;
- :mod:`~vcrbench.plan.paths`: every output path; :mod:`~vcrbench.plan.resources`: what jobs need;
- :mod:`~vcrbench.plan.products`: every figure and table, declared once (outputs, caption,
  version, locality, what a config asks for);
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
from vcrbench.errors import ConfigError, ConfigErrors, raise_all
from vcrbench.plan import definitions, paths
from vcrbench.plan.checks import check, check_model_entries_given
from vcrbench.plan.config import canonical
from vcrbench.plan.rules import Plan, alternatives


def validate(config: dict, schema_path: str | Path | None = None) -> dict:
    """Validate ``config`` (schema, then :func:`check`), filling every default in place; raises
    :class:`~vcrbench.errors.ConfigErrors` naming every key at fault (a typo'd key, a wrong
    type, an unknown corruption: all three in one message). Returns the config."""
    problems: list[str] = []
    try:
        check_model_entries_given(config)
    except ConfigErrors as exc:
        problems += exc.problems
    empty = [_key(p) for p in problems]  # an empty model entry: named once, by what it needs

    def new(found: list[str]) -> list[str]:
        return [p for p in found if not any(_is_within(_key(p), k) for k in empty)]

    try:
        schema.validate(config, schema_path)
    except ConfigErrors as exc:
        problems += new(exc.problems)
    try:
        check(config, schema_failed=bool(problems))
    except ConfigErrors as exc:
        problems += new(exc.problems)
    raise_all(problems)
    return config


def _is_within(key: str, block: str) -> bool:
    return key == block or key.startswith(f"{block}.")


def _key(problem: str) -> str:
    """The key a problem's message names (``config key 'models.m': …`` -> ``models.m``)."""
    return problem.removeprefix("config key '").split("'", 1)[0]


def load(path: str | Path | Mapping) -> dict:
    """A config file (or mapping) read and validated (outside Snakemake)."""
    if isinstance(path, Mapping):
        return validate(dict(path))
    path = Path(path)
    try:
        config = schema.load_yaml(path.read_text()) or {}
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
