"""The experiment of one :func:`vcrbench.benchmark` call, as a validated config.

A call's settings are a config, validated by the plan layer as the workflow validates its own
(:func:`vcrbench.plan.validate`: every default from the schema, every problem named by its key):
the base config (``config=``; else, with ``run=``, the run's ``config/config.yaml``; else the
embedded default, ``config/config.yaml`` of the checkout), the call's few keyword arguments
written into it as config keys, and the evaluated model's entry added to its ``models``.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from vcrbench import plan, schema
from vcrbench.errors import ConfigError

#: The workflow's default config, relative to a checkout (and to a run's working folder: the
#: workflow profile names it there).
DEFAULT_CONFIG = Path("config") / "config.yaml"
#: The labels file of a folder given as ``dataset=`` (columns file,label: docs/datasets.md).
FOLDER_LABELS = "labels.csv"
#: Characters a model name may hold (the schema's names of models: also a folder name).
_NAME_BAD = re.compile(r"[^A-Za-z0-9_.-]")


def checkout_config() -> Path:
    """``config/config.yaml`` of the checkout this package runs from (``make setup`` installs it
    editable), the embedded default."""
    here = Path(__file__).resolve()
    for folder in here.parents:
        if (folder / DEFAULT_CONFIG).is_file() and (folder / "Snakefile").is_file():
            return folder / DEFAULT_CONFIG
    raise ConfigError(
        "vcrbench.benchmark: no config given and no checkout of VCR-Bench around the installed "
        f"package ({here}) holds {DEFAULT_CONFIG}; pass config= (a config file or mapping)"
    )


def run_folders(run: str | os.PathLike) -> tuple[Path, Path]:
    """``(working folder, results folder)`` of a finished workflow run given as its ``results/``
    folder (or the folder that holds it)."""
    run = Path(run)
    results = run if run.name == "results" or not (run / "results").is_dir() else run / "results"
    if not results.is_dir():
        raise ConfigError(f"run {run}: no such folder (a finished run's results/ folder)")
    if not (results / "testsets").is_dir():
        raise ConfigError(f"run {run}: {results} holds no testsets/; is it a workflow's results/?")
    return results.parent, results


def read_base(config, run: str | os.PathLike | None) -> tuple[dict, str]:
    """The base config (a fresh copy) and where it came from."""
    if isinstance(config, Mapping):
        return copy.deepcopy(dict(config)), "the config mapping given"
    if config is None:
        if run is not None:
            workdir, _ = run_folders(run)
            config = workdir / DEFAULT_CONFIG
            if not config.is_file():
                raise ConfigError(
                    f"run {run}: no config given and {config} (the workflow's default) is not "
                    "there; pass config= the config file the run was made with"
                )
        else:
            config = checkout_config()
    path = Path(config)
    if not path.is_file():
        raise ConfigError(f"config {path}: no such file")
    return schema.load_yaml(path.read_text()) or {}, str(path)


def model_name(model, name: str | None) -> str:
    """The name of the evaluated model in every table: ``name``, else the model's id (``timm:x``
    -> ``x``) or the class of a module, as a config may spell a model's name."""
    if name is None:
        if isinstance(model, str):
            name = model.split(":", 1)[-1]
        elif isinstance(model, Mapping):
            name = str(model.get("id", "model"))
        else:
            name = type(model).__name__
        name = _NAME_BAD.sub("_", name).lstrip("_.-") or "model"
    if not isinstance(name, str) or _NAME_BAD.search(name) or not name[:1].isalnum():
        raise ConfigError(
            f"model name {name!r}: use letters, digits, '_', '.' and '-' (it names a folder)"
        )
    return name


def model_entry(model, base_models: Mapping) -> dict | None:
    """The config entry of ``model`` given as ``source:id``, as an entry, or as the name of one
    of ``base_models``; None for a module."""
    if isinstance(model, Mapping):
        return dict(model)
    if isinstance(model, str):
        if ":" not in model:
            if model in base_models:
                return dict(base_models[model])
            raise ConfigError(
                f"model {model!r}: give a model as 'source:id' (e.g. 'timm:resnet50.a1_in1k'), "
                f"as a config entry, or by the name of a model of the config "
                f"({', '.join(base_models) or 'it has none'})"
            )
        source, model_id = model.split(":", 1)
        return {"source": source, "id": model_id}
    return None


def build(
    base: dict,
    name: str,
    entry: dict | None,
    *,
    keep_models: bool,
    corruptions: Sequence[str] | None = None,
    n_samples: int | None = None,
    dataset: str | os.PathLike | Mapping | None = None,
    device: str | None = None,
    settings: Mapping | None = None,
) -> dict:
    """The call's config, validated: ``base`` with the keyword arguments written in as config
    keys (``settings``: ``{"dotted.key": value}`` for any other) and ``entry`` under ``name`` in
    ``models`` (the base's models kept only with ``keep_models``, a run's: compared with)."""
    config = copy.deepcopy(base)
    if corruptions is not None:
        given = config.get("corruptions") or {}
        config["corruptions"] = {c: copy.deepcopy(given.get(c) or {}) for c in corruptions}
    if n_samples is not None:
        config.setdefault("sampling", {})["n_samples"] = n_samples
    if dataset is not None:
        if isinstance(dataset, Mapping):
            config["dataset"] = dict(dataset)
        else:  # a folder of images, labelled by its labels.csv where it has one
            folder = Path(dataset)
            labels = folder / FOLDER_LABELS
            config["dataset"] = {
                **(config.get("dataset") or {}),
                "kind": "folder",
                "path": str(folder),
                "labels": str(labels) if labels.is_file() else None,
            }
    if device is not None:
        config.setdefault("inference", {})["device"] = device
    for key, value in (settings or {}).items():
        block = config
        *parents, last = key.split(".")
        for part in parents:
            block = block.setdefault(part, {})
        block[last] = value
    models = dict(config.get("models") or {}) if keep_models else {}
    if entry is not None:
        models[name] = entry
    if models:
        config["models"] = models
    elif not keep_models:
        # A module is no config entry: the config keeps its models for validation only.
        config["models"] = dict(base.get("models") or {})
    return plan.validate(config)
