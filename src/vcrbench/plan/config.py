"""What a config asks for: the corruptions, the models (the fine-tuned ones included), the shards
and inference groups of every test set, the ImageNet-C comparison sets, the weights files.

Every function takes a config the schema has validated (defaults filled in,
:func:`vcrbench.plan.validate`) and only looks things up: cheap enough for every job the workflow
plans.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from vcrbench import schema
from vcrbench.errors import ConfigError
from vcrbench.plan import paths
from vcrbench.plan.models import expand_bases
from vcrbench.settings import DatasetSettings, VifSettings
from vcrbench.vocab import (
    DEFAULT_CAST,
    DEFAULT_DOMAIN_SET,
    MODEL_WORKFLOW_KEYS,
    resolve_label_space,
    shard_id,
)

#: Keys added to a config block after runs had written results, whose default leaves every
#: output as it was: a rule's params (:func:`params_section`) carry one only when the config sets
#: it to something else, so that adding the key reruns nothing and changes no config hash.
#: Block -> keys.
PARAMS_WHEN_SET = {"estimation": ("short_label_space", "empty_bins", "decision16")}


def params_section(config: Mapping, name: str) -> dict:
    """Config block ``name`` as rules take it as params: keys sorted (:func:`canonical`), and
    the keys of :data:`PARAMS_WHEN_SET` left out where they hold the schema's default."""
    block = dict(config[name])
    quiet = PARAMS_WHEN_SET.get(name, ())
    if quiet:
        defaults = schema.defaults(name)
        for key in quiet:
            if key in block and block[key] == defaults.get(key):
                del block[key]
    return canonical(block)


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
    """The config entry of a corruption, with ``sampling.domain_set`` and ``sampling.cast`` where
    they are not the default (so that every job that builds the corruption builds it on the same
    domain and casts it the same way, and a default run's params and hashes stay as they were);
    the entry's own ``cast`` wins."""
    opts = dict(config["corruptions"][corruption] or {})
    chosen = config["sampling"].get("domain_set", DEFAULT_DOMAIN_SET)
    if chosen != DEFAULT_DOMAIN_SET:
        opts.setdefault("domain_set", chosen)
    if cast(config) != DEFAULT_CAST:
        opts.setdefault("cast", cast(config))
    return opts


def cast(config: Mapping) -> str:
    """``sampling.cast``: how every corrupted image becomes uint8 (``round`` when absent, its
    ``absent_default``, not filled in; ``truncate``: the authors' ``np.uint8``)."""
    return unfilled(config, "sampling.cast")


def n_samples(config: Mapping, corruption: str) -> int:
    opts = corruption_options(config, corruption)
    return int(opts["n_samples"]) if "n_samples" in opts else int(config["sampling"]["n_samples"])


def n_shards(config: Mapping, corruption: str) -> int:
    return math.ceil(n_samples(config, corruption) / config["sampling"]["shard_size"])


def shard_ids(config: Mapping, corruption: str) -> list[str]:
    return [shard_id(i) for i in range(n_shards(config, corruption))]


def _group_ids(config: Mapping, shards: int) -> list[str]:
    per_job = config["inference"]["shards_per_job"]
    return [shard_id(i) for i in range(math.ceil(shards / per_job))]


def _group_shards(config: Mapping, shards: list[str], group: str, what: str) -> list[str]:
    per_job = config["inference"]["shards_per_job"]
    start = int(group) * per_job
    if not 0 <= start < len(shards):
        raise ConfigError(f"group {group} does not exist for {what}")
    return shards[start : start + per_job]


def group_ids(config: Mapping, corruption: str) -> list[str]:
    return _group_ids(config, n_shards(config, corruption))


def group_shards(config: Mapping, corruption: str, group: str) -> list[str]:
    """The shard ids that inference group ``group`` of ``corruption`` reads."""
    return _group_shards(config, shard_ids(config, corruption), group, f"corruption {corruption!r}")


# --------------------------------------------------------------------------- the clean set


def unfilled(config: Mapping, path: str):
    """The value of ``path`` (``vif.grey``) in a validated config, or the schema's default of a key
    that validation does not fill in (``absent_default``: ``dataset.resolution``,
    ``dataset.stored_max_side``, ``vif.grey``, so that a config without them gives its jobs the
    params, and hashes, it always gave)."""
    block, _, key = path.rpartition(".")
    node = config
    for part in block.split(".") if block else ():
        node = node[part]
    return node[key] if key in node else schema.default_of(path)


def dataset_settings(config: Mapping) -> DatasetSettings:
    """Which images, and how they become the clean set: the ``dataset`` block, typed
    (:class:`DatasetSettings`; ``.stored`` with ``dataset.resolution: stored``, the authors'
    pipeline, and then ``.stored_max_side``)."""
    return DatasetSettings.of_config(config["dataset"])


def grey(config: Mapping) -> str:
    """``vif.grey``: the grey conversion before VIF (``float`` or ``uint8``)."""
    return unfilled(config, "vif.grey")


def vif_settings(config: Mapping) -> VifSettings:
    """How every Δv of the run is measured: the ``vif`` block, typed (:class:`VifSettings`)."""
    return VifSettings.of_config(config["vif"])


def measurement_params(config: Mapping) -> dict:
    """The params a job that measures Δv gets beside ``vif_variant``: every other key of the
    ``vif`` block the validated config holds, by its own name (``{"grey": ...}`` where
    ``vif.grey`` is given; nothing for a key left out, an ``absent_default``, so that a config
    without it keeps its jobs' params and hashes); the job types them back with
    :meth:`VifSettings.of_job`."""
    return {key: value for key, value in sorted(config["vif"].items()) if key != "variant"}


#: Images the plan counts for a dataset whose listing is not known before it is read (an
#: ``imagenet-val`` folder without a labels file: the ILSVRC2012 validation set).
IMAGENET_VAL_IMAGES = 50_000


def clean_set_size(config: Mapping) -> int:
    """Images the clean set holds (at most), from the config and the dataset's listing alone.

    The listing is the one the dataset's kind registers (the embedded image list), else the
    labels CSV (``folder``, or ``imagenet-val`` with ``dataset.labels``), else the 50,000
    ILSVRC2012 validation images; then ``include``, ``exclude`` and ``limit`` apply. No image is
    opened and no folder listed, so the plan (and with it the ImageNet-C shards) is static from
    the config; it is exact but for images skipped as unreadable (``on_error: skip``) or an
    ``imagenet-val`` folder holding a subset.
    """
    from vcrbench.datasets.loading import DATASET_KINDS

    ds = config["dataset"]
    listing = DATASET_KINDS[ds["kind"]].listing
    if listing is not None:
        known = listing(ds)
    elif ds["labels"]:
        from vcrbench.datasets.listing import read_labels_file
        from vcrbench.errors import DatasetError

        try:
            # a row's defects are left to the dataset check, which names them all at once
            known = [Path(f).as_posix() for f in read_labels_file(ds["labels"], problems=[])]
        except DatasetError as exc:
            raise ConfigError(f"config key 'dataset.labels': {exc}") from exc
    else:
        known = None
    if ds["include"] is not None:
        chosen = set(ds["include"]) if known is None else set(ds["include"]) & set(known)
        n = len(chosen - set(ds["exclude"]))
    else:
        n = (IMAGENET_VAL_IMAGES if known is None else len(set(known))) - len(set(ds["exclude"]))
    if ds["limit"] is not None:
        n = min(n, ds["limit"])
    return max(n, 0)


# --------------------------------------------------------------------------- ImageNet-C sets


def imagenet_c_images(config: Mapping, clean_images: int) -> int:
    """Images per severity of the ImageNet-C sets: ``imagenet_c.n_images`` of the clean set's
    ``clean_images`` (all of them when null)."""
    n = config["imagenet_c"]["n_images"]
    return clean_images if n is None else min(int(n), clean_images)


def imagenet_c_samples(config: Mapping, corruption: str, clean_images: int) -> int:
    """Samples of one corruption's ImageNet-C set: its images per severity x its severities."""
    from vcrbench.corruptions import get_corruption

    severities = len(get_corruption(corruption, corruption_options(config, corruption)).imagenet_c)
    return imagenet_c_images(config, clean_images) * severities


def imagenet_c_n_shards(config: Mapping, corruption: str, clean_images: int) -> int:
    """Shards of one corruption's ImageNet-C set: its samples in shards of
    ``sampling.shard_size`` (at least one)."""
    samples = imagenet_c_samples(config, corruption, clean_images)
    return max(1, math.ceil(samples / config["sampling"]["shard_size"]))


def imagenet_c_shard_ids(config: Mapping, corruption: str, clean_images: int) -> list[str]:
    return [shard_id(i) for i in range(imagenet_c_n_shards(config, corruption, clean_images))]


def imagenet_c_group_ids(config: Mapping, corruption: str, clean_images: int) -> list[str]:
    return _group_ids(config, imagenet_c_n_shards(config, corruption, clean_images))


def imagenet_c_group_shards(
    config: Mapping, corruption: str, group: str, shards: list[str]
) -> list[str]:
    """Of ``shards``, the ImageNet-C set's shard ids (:func:`imagenet_c_shard_ids`), those that
    inference group ``group`` of ``corruption`` reads."""
    return _group_shards(config, shards, group, f"the ImageNet-C set of {corruption!r}")


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
        if "label_space" in entry:
            # `label_space: dataset`: the head predicts the dataset's classes (CLIP builds its
            # zero-shot head from their names), whatever the dataset's label space is.
            entry["label_space"] = resolve_label_space(
                entry["label_space"], config["dataset"]["label_space"]
            )
    return entries


def dataset_label_space_name(config: Mapping) -> str:
    """The name of the dataset's label space (``imagenet1k`` or ``dataset.label_space.name``),
    the value of the ``label_space`` column of every table."""
    space = config["dataset"]["label_space"]
    return space["name"] if isinstance(space, Mapping) else str(space)


def model_settings(entry: Mapping) -> dict:
    """A model entry as the model sources read it: without ``resources`` (the plan's business)
    and the keys that only describe it for Table 1 (``architecture``, ``training``), so that
    writing those reruns no job but the table's."""
    return {k: v for k, v in entry.items() if k not in MODEL_WORKFLOW_KEYS}


def fetched_checkpoint(entry: Mapping) -> bool:
    """Whether a model entry's ``checkpoint`` is downloaded by ``fetch_weights`` when it is not
    there: the entry gives an http(s) ``url`` (:func:`vcrbench.models.download.downloadable`)."""
    from vcrbench.models.download import downloadable

    return bool(entry.get("checkpoint")) and downloadable(entry.get("url"))


def model_weights(config: Mapping, model: str) -> list[str]:
    """Weight files a model's predictions depend on (its ``checkpoint``, if any): a missing
    file then stops the run naming it, and a changed one reruns that model's jobs only. A
    configured model (not one the workflow fine-tunes) also needs its weights fetched into the
    cache first (``fetch_weights``, a local rule, so no GPU job downloads anything). That record
    is flagged ``ancient`` (Snakemake's flag): it orders the jobs, and a rerun of the fetch (a
    fresh clone, a new version of the fetch stage) reruns no prediction; a changed model entry
    reruns its jobs through their ``model`` param.

    A checkpoint with an http(s) ``url`` is not an input: ``fetch_weights`` downloads it when it
    is not there (no rule of Snakemake's makes it), so it is weights that the record stands for,
    as a hub's cache is; its sha256 is in the record, and a changed entry (its url or sha256)
    reruns the model's jobs."""
    entry = model_entries(config)[model]
    checkpoint = None if fetched_checkpoint(entry) else entry.get("checkpoint")
    fetched = []
    if model in config["models"]:
        from snakemake.io import ancient

        fetched = [ancient(paths.fill(paths.WEIGHTS_FETCHED, model=model))]
    return ([checkpoint] if checkpoint else []) + fetched
