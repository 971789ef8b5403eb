"""The checks a schema cannot make: names against the library's registries (corruptions, model
sources, label spaces, human references), paths that must exist, and how blocks fit together.
Each raises :class:`~vcrbench.errors.ConfigError` whose message starts with the key at fault,
before any job starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from vcrbench.errors import ConfigError, did_you_mean
from vcrbench.figures.options import check_options
from vcrbench.plan import humans, retrain
from vcrbench.plan.config import model_entries, model_settings


def check(config: Mapping) -> None:
    """Every semantic check of a validated config (see the module docstring)."""
    _check_dataset(config["dataset"])
    _check_corruptions(config)
    retrain.check(config)
    _check_models(config)
    humans.check(config)
    check_options(config["figures"])


def _check_dataset(ds: Mapping) -> None:
    kind = ds["kind"]
    if kind in ("folder", "imagenet-val"):
        path = ds["path"]
        if not path:
            raise ConfigError(f"config key 'dataset.path': required for dataset.kind {kind!r}")
        if not Path(path).is_dir():
            raise ConfigError(f"config key 'dataset.path': folder {path} does not exist")
    if kind == "folder" and not ds["labels"]:
        raise ConfigError("config key 'dataset.labels': required for dataset.kind 'folder'")
    if ds["labels"] and not Path(ds["labels"]).is_file():
        raise ConfigError(f"config key 'dataset.labels': file {ds['labels']} does not exist")
    if ds["crop"] > ds["resize"]:
        raise ConfigError(
            f"config key 'dataset.crop': {ds['crop']} exceeds dataset.resize {ds['resize']}"
        )


def _check_corruptions(config: Mapping) -> None:
    from vcrbench.corruptions import get_corruption, list_corruptions

    known = list_corruptions()
    for name, opts in config["corruptions"].items():
        opts = opts or {}
        if name not in known and "function" not in opts:
            raise ConfigError(
                f"config key 'corruptions.{name}': unknown corruption {name!r}"
                f"{did_you_mean(name, known)}; known: {', '.join(sorted(known))}; "
                "or give `function: package.module:function`"
            )
        try:
            get_corruption(name, opts)
        except (ValueError, KeyError, TypeError, ImportError) as exc:
            raise ConfigError(f"config key 'corruptions.{name}': {exc}") from exc


def _check_models(config: Mapping) -> None:
    from vcrbench.models import ModelSpec

    for name, entry in model_entries(config).items():
        try:
            ModelSpec.from_config(name, model_settings(entry))
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"config key 'models.{name}': {exc}") from exc
