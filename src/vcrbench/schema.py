"""The config schema: the single source of every config key, its type and its default.

The schema ships inside the package (``vcrbench/data/config.schema.yaml``; the repository's
``config/config.schema.yaml`` is the same file) so that the workflow, the library and its tests all
read the same defaults. :func:`validate` checks a whole config and fills in every default (what
Snakemake's ``validate`` does, with messages that name the key); :func:`validate_block` does the
same for one block (``figures``, ``estimation`` …) of a library caller that has no whole config;
:func:`defaults` gives a block's defaults, :func:`definition_defaults` those of a ``$defs`` entry
(option sets that are not filled into the config, e.g. ``dv_uniform_options``), and
:func:`default_of` one key's, also where the key's default is not filled in (``absent_default``:
``vif.grey``, ``dataset.resolution``, ``dataset.stored_max_side``, ``sampling.cast``).
"""

from __future__ import annotations

import copy
import functools
import importlib.resources
from collections.abc import Mapping
from pathlib import Path

import yaml

from vcrbench.errors import ConfigError, did_you_mean, raise_all

SCHEMA_FILE = "config.schema.yaml"

#: PyYAML's safe loader, libyaml's C implementation where PyYAML was built with it (the wheels
#: are): the same documents, about 7x faster; the schema alone took 0.16 s to read in pure Python,
#: in every Snakemake start and every job.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str):
    """``yaml.safe_load(text)`` with :data:`SAFE_LOADER`."""
    return yaml.load(text, Loader=SAFE_LOADER)  # noqa: S506 - a safe loader


@functools.lru_cache(maxsize=4)
def _load(path: str | None) -> dict:
    if path is None:
        text = (importlib.resources.files("vcrbench") / "data" / SCHEMA_FILE).read_text()
    else:
        text = Path(path).read_text()
    return load_yaml(text)


def schema(path: str | Path | None = None) -> dict:
    """The config schema (a copy: callers may change it)."""
    return copy.deepcopy(_load(None if path is None else str(path)))


def _validator(schema_obj: dict):
    import jsonschema

    base = jsonschema.validators.validator_for(schema_obj)

    def set_defaults(validator, properties, instance, schema_):
        if isinstance(instance, dict):
            for prop, sub in properties.items():
                if "default" in sub:
                    instance.setdefault(prop, copy.deepcopy(sub["default"]))
        yield from base.VALIDATORS["properties"](validator, properties, instance, schema_)

    return jsonschema.validators.extend(base, {"properties": set_defaults})(schema_obj)


def _check(config: dict, schema_obj: dict, prefix: str = "") -> dict:
    validator = _validator(schema_obj)
    # Two passes: the first fills defaults (also of nested objects created by defaults).
    for _ in validator.iter_errors(config):
        pass
    errors = sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.path])
    raise_all(problem for err in errors for problem in _problems(err, prefix))
    return config


def _problems(err, prefix: str) -> list[str]:
    """The messages of one schema error, each naming its key (an unknown key by itself:
    ``figures.dpis``, not only its block, with the nearest known key; a missing required key by
    itself, ``models``, with what it holds)."""
    parts = [*([prefix] if prefix else []), *(str(p) for p in err.path)]
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        known = list(err.schema.get("properties", {}))
        return [
            f"config key '{'.'.join([*parts, extra])}': unknown key {extra!r}"
            f"{did_you_mean(extra, known)}" + (f"; known: {', '.join(known)}" if known else "")
            for extra in sorted(set(err.instance) - set(known))
        ]
    if err.validator == "required" and isinstance(err.instance, dict):
        what = {k: v.get("description") for k, v in err.schema.get("properties", {}).items()}
        return [
            f"config key '{'.'.join([*parts, key])}': required, and missing"
            + (f" ({_first_sentence(what[key])})" if what.get(key) else "")
            for key in err.validator_value
            if key not in err.instance
        ]
    return [f"config key '{'.'.join(parts) or '<root>'}': {err.message}"]


def _first_sentence(text: str) -> str:
    return " ".join(text.split()).split(". ")[0].rstrip(".")


def validate(config: dict, path: str | Path | None = None) -> dict:
    """Validate ``config`` against the schema (the package's, or the file at ``path``) and fill in
    every default, in place; :class:`~vcrbench.errors.ConfigErrors` names every key at fault."""
    return _check(config, _load(None if path is None else str(path)))


def validate_block(name: str, block: Mapping | None) -> dict:
    """One top-level block (e.g. ``figures``) checked and completed by its part of the schema; a
    new dict (``block`` is not changed)."""
    sub = _load(None)["properties"].get(name)
    if sub is None:
        raise ConfigError(f"config key '{name}': no such block")
    sub = {**sub, "$defs": _load(None).get("$defs", {})}
    return _check(copy.deepcopy(dict(block or {})), sub, prefix=name)


def defaults(name: str) -> dict:
    """The defaults of one top-level block (every key the schema gives a default)."""
    return validate_block(name, {})


def definition_defaults(name: str) -> dict:
    """The defaults of the schema's ``$defs`` entry ``name``, in the schema's order."""
    entry = _load(None).get("$defs", {}).get(name)
    if entry is None:
        raise ConfigError(f"schema: no definition {name!r}")
    props = entry.get("properties", {})
    return {key: copy.deepcopy(sub["default"]) for key, sub in props.items() if "default" in sub}


#: The annotation of a key whose default is not filled into the config (so that a config without
#: the key gives its jobs the params, and so the hashes, they always had): the validator ignores
#: it, :func:`default_of` reads it.
ABSENT_DEFAULT = "absent_default"


def _node(path: str) -> dict:
    node, parts = _load(None), path.split(".")
    if parts[0] == "$defs":
        node, parts = (node.get("$defs", {}).get(parts[1]) if len(parts) > 1 else None), parts[2:]
    for part in parts:
        if not isinstance(node, dict):
            break
        node = (
            node.get("additionalProperties")
            if part == "*"
            else node.get("properties", {}).get(part)
        )
    if not isinstance(node, dict):
        raise ConfigError(f"config key {path!r}: not in the schema")
    return node


def default_of(path: str):
    """The default of the key at ``path`` (``vif.variant``, ``retrain.runs.*.lr``,
    ``$defs.dv_uniform_options.bins``): its ``default``, or its ``absent_default`` where
    validation leaves the key out (``vif.grey``); a :class:`~vcrbench.errors.ConfigError` names a
    key that is not in the schema or has neither."""
    node = _node(path)
    for keyword in ("default", ABSENT_DEFAULT):
        if keyword in node:
            return copy.deepcopy(node[keyword])
    raise ConfigError(f"config key {path!r}: the schema gives it no default")


def enum_of(path: str) -> tuple:
    """The values the key at ``path`` may take (its ``enum``), in the schema's order."""
    node = _node(path)
    if "enum" not in node:
        raise ConfigError(f"config key {path!r}: the schema lists no values for it")
    return tuple(node["enum"])
