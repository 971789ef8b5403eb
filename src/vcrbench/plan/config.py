"""What a config asks for: the corruptions, the models (the fine-tuned ones included), the shards
and inference groups of every test set, the ImageNet-C comparison sets, the weights files.

Every function takes a config the schema has validated (defaults filled in,
:func:`vcrbench.plan.validate`) and only looks things up: cheap enough for every job the workflow
plans.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from vcrbench.errors import ConfigError
from vcrbench.plan.models import expand_bases
from vcrbench.vocab import DATASET_LABEL_SPACE, shard_id


def canonical(obj):
    """``obj`` with every mapping's keys sorted (recursively).

    Snakemake compares a rule's params by their text, so the same entry written with its keys in
    another order would rerun the rule; rules pass config entries through this first.
    """
    if isinstance(obj, Mapping):
        return {k: canonical(obj[k]) for k in sorted(obj, key=str)}
    if isinstance(obj, list | tuple):
        return [canonical(v) for v in obj]
    return obj


# --------------------------------------------------------------------------- corruptions


def corruption_names(config: Mapping) -> list[str]:
    return list(config["corruptions"])


def corruption_options(config: Mapping, corruption: str) -> dict:
    return dict(config["corruptions"][corruption] or {})


def n_samples(config: Mapping, corruption: str) -> int:
    opts = corruption_options(config, corruption)
    return int(opts["n_samples"]) if "n_samples" in opts else int(config["sampling"]["n_samples"])


def n_shards(config: Mapping, corruption: str) -> int:
    return math.ceil(n_samples(config, corruption) / config["sampling"]["shard_size"])


def shard_ids(config: Mapping, corruption: str) -> list[str]:
    return [shard_id(i) for i in range(n_shards(config, corruption))]


def group_ids(config: Mapping, corruption: str) -> list[str]:
    per_job = config["inference"]["shards_per_job"]
    return [shard_id(i) for i in range(math.ceil(n_shards(config, corruption) / per_job))]


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


# --------------------------------------------------------------------------- models


def model_entries(config: Mapping) -> dict[str, dict]:
    """Every model to evaluate: the configured ones (each ``base`` expanded,
    :func:`~vcrbench.plan.models.expand_bases`) plus those the workflow fine-tunes (``retrain``),
    whose entries point at checkpoints the workflow writes."""
    from vcrbench.plan.retrain import derived_model_entries

    entries = expand_bases(config["models"])
    for name, entry in derived_model_entries(config).items():
        if name in entries:
            raise ConfigError(f"config key 'retrain': model name {name!r} is already in models")
        entries[name] = entry
    for entry in entries.values():
        if entry.get("label_space") == DATASET_LABEL_SPACE:
            # `label_space: dataset`: the head predicts the dataset's classes (CLIP builds its
            # zero-shot head from their names), whatever the dataset's label space is.
            entry["label_space"] = config["dataset"]["label_space"]
    return entries


def dataset_label_space_name(config: Mapping) -> str:
    """The name of the dataset's label space (``imagenet1k`` or ``dataset.label_space.name``),
    the value of the ``label_space`` column of every table."""
    space = config["dataset"]["label_space"]
    return space["name"] if isinstance(space, Mapping) else str(space)


def model_weights(config: Mapping, model: str) -> list[str]:
    """Weight files a model's predictions depend on (its ``checkpoint``, if any): a missing
    file then stops the run naming it, and a changed one reruns that model's jobs only."""
    checkpoint = model_entries(config)[model].get("checkpoint")
    return [checkpoint] if checkpoint else []
