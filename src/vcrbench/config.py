"""Configuration: semantic checks against the registries, and the quantities derived from config.

Snakemake validates the structure of the config against ``config/config.schema.yaml`` (and fills in
defaults). :func:`check` then checks what a schema cannot: names against the library's registries
(corruptions, model sources, label spaces, human references) and paths that must exist. Every
error is a :class:`ConfigError` whose message starts with the config key at fault, and it is raised
before any job starts.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from pathlib import Path

import yaml


class ConfigError(ValueError):
    """A config value that cannot be used; the message names the key."""


def _suggest(name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def load(path: str | Path, schema: str | Path | None = None) -> dict:
    """Load a config file, fill defaults from the schema, and run :func:`check` (outside Snakemake)."""
    path = Path(path)
    try:
        config = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    if schema is not None:
        validate_schema(config, schema)
    check(config)
    return config


def validate_schema(config: dict, schema: str | Path) -> dict:
    """Validate against the JSON schema and fill defaults (what Snakemake's ``validate`` does)."""
    import jsonschema

    schema_obj = yaml.safe_load(Path(schema).read_text())
    validator_cls = jsonschema.validators.validator_for(schema_obj)

    def set_defaults(validator, properties, instance, schema_):
        if isinstance(instance, dict):
            for prop, sub in properties.items():
                if "default" in sub:
                    instance.setdefault(prop, sub["default"])
        yield from validator_cls.VALIDATORS["properties"](validator, properties, instance, schema_)

    extended = jsonschema.validators.extend(validator_cls, {"properties": set_defaults})
    # Two passes: the first fills defaults of nested objects created by defaults.
    extended(schema_obj).validate(config)
    errors = sorted(extended(schema_obj).iter_errors(config), key=lambda e: list(e.path))
    if errors:
        err = errors[0]
        key = ".".join(str(p) for p in err.path) or "<root>"
        raise ConfigError(f"config key '{key}': {err.message}")
    return config


# --------------------------------------------------------------------------- derived quantities


def corruption_names(config: Mapping) -> list[str]:
    return list(config["corruptions"])


def model_names(config: Mapping) -> list[str]:
    return list(config["models"])


def corruption_options(config: Mapping, corruption: str) -> dict:
    return dict(config["corruptions"][corruption] or {})


def n_samples(config: Mapping, corruption: str) -> int:
    opts = corruption_options(config, corruption)
    return int(opts.get("n_samples", config["sampling"]["n_samples"]))


def n_shards(config: Mapping, corruption: str) -> int:
    return math.ceil(n_samples(config, corruption) / config["sampling"]["shard_size"])


def shard_ids(config: Mapping, corruption: str) -> list[str]:
    return [f"{i:05d}" for i in range(n_shards(config, corruption))]


def group_ids(config: Mapping, corruption: str) -> list[str]:
    per_job = config["inference"]["shards_per_job"]
    return [f"{i:05d}" for i in range(math.ceil(n_shards(config, corruption) / per_job))]


def group_shards(config: Mapping, corruption: str, group: str) -> list[str]:
    """The shard ids that inference group ``group`` of ``corruption`` reads."""
    per_job = config["inference"]["shards_per_job"]
    shards = shard_ids(config, corruption)
    start = int(group) * per_job
    if not 0 <= start < len(shards):
        raise ConfigError(f"group {group} does not exist for corruption {corruption!r}")
    return shards[start : start + per_job]


def imagenet_c_corruptions(config: Mapping) -> list[str]:
    """Configured corruptions that have ImageNet-C severities (when comparison sets are enabled)."""
    if not config["imagenet_c"]["enabled"]:
        return []
    from vcrbench.corruptions import get_corruption

    return [
        name
        for name in corruption_names(config)
        if get_corruption(name, corruption_options(config, name)).imagenet_c
    ]


def scaled_min_count(config: Mapping, n: int) -> int:
    cov = config["coverage"]
    return max(1, round(cov["min_count"] * n / cov["reference_n"]))


# --------------------------------------------------------------------------- semantic checks


def check(config: Mapping) -> None:
    """Check names and paths that the schema cannot; raise :class:`ConfigError` naming the key."""
    _check_dataset(config.get("dataset", {}))
    _check_corruptions(config)
    _check_models(config)
    sampling = config.get("sampling", {})
    if sampling.get("shard_size", 1) < 1:
        raise ConfigError("config key 'sampling.shard_size': must be at least 1")


def _check_dataset(ds: Mapping) -> None:
    kind = ds.get("kind", "embedded")
    if kind in ("folder", "imagenet-val"):
        path = ds.get("path")
        if not path:
            raise ConfigError(f"config key 'dataset.path': required for dataset.kind {kind!r}")
        if not Path(path).is_dir():
            raise ConfigError(f"config key 'dataset.path': folder {path} does not exist")
    if kind == "folder" and not ds.get("labels"):
        raise ConfigError("config key 'dataset.labels': required for dataset.kind 'folder'")
    labels = ds.get("labels")
    if labels and not Path(labels).is_file():
        raise ConfigError(f"config key 'dataset.labels': file {labels} does not exist")
    crop, resize = ds.get("crop", 224), ds.get("resize", 256)
    if crop > resize:
        raise ConfigError(f"config key 'dataset.crop': {crop} exceeds dataset.resize {resize}")


def _check_corruptions(config: Mapping) -> None:
    from vcrbench.corruptions import get_corruption, list_corruptions

    known = list_corruptions()
    for name, opts in (config.get("corruptions") or {}).items():
        opts = opts or {}
        if name not in known and "function" not in opts:
            raise ConfigError(
                f"config key 'corruptions.{name}': unknown corruption {name!r}{_suggest(name, known)}; "
                f"known: {', '.join(sorted(known))}; or give `function: package.module:function`"
            )
        try:
            get_corruption(name, opts)
        except (ValueError, KeyError, TypeError, ImportError) as exc:
            raise ConfigError(f"config key 'corruptions.{name}': {exc}") from exc


def _check_models(config: Mapping) -> None:
    from vcrbench.models import ModelSpec

    for name, entry in (config.get("models") or {}).items():
        try:
            ModelSpec.from_config(name, entry)
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"config key 'models.{name}': {exc}") from exc
