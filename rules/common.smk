# Config validation, derived lists, wildcard constraints and named input functions.
# Any logic beyond looking things up lives in the vcrbench library.
import re

from snakemake.utils import validate

import vcrbench.config as vconfig

validate(config, "../config/config.schema.yaml")
try:
    vconfig.check(config)
except vconfig.ConfigError as exc:
    raise WorkflowError(f"invalid config: {exc}") from None

CORRUPTIONS = vconfig.corruption_names(config)
MODELS = vconfig.model_names(config)
IMAGENET_C = vconfig.imagenet_c_corruptions(config)

CLEAN_IMAGES = "results/dataset/images.npy"
CLEAN_INDEX = "results/dataset/index.parquet"


def _alternatives(names):
    return "|".join(re.escape(n) for n in names)


wildcard_constraints:
    corruption=_alternatives(CORRUPTIONS),
    model=_alternatives(MODELS),
    shard=r"\d{5}",
    group=r"\d{5}",


# --------------------------------------------------------------------------- input functions


def shard_files(wildcards):
    """Every shard of one corruption's test set."""
    return expand(
        "results/testsets/{corruption}/shard-{shard}.parquet",
        corruption=wildcards.corruption,
        shard=vconfig.shard_ids(config, wildcards.corruption),
    )


def group_shard_files(wildcards):
    """The shards that one inference job (a group) reads."""
    return expand(
        "results/testsets/{corruption}/shard-{shard}.parquet",
        corruption=wildcards.corruption,
        shard=vconfig.group_shards(config, wildcards.corruption, wildcards.group),
    )


def prediction_group_files(wildcards):
    """Every prediction file of one model on one corruption."""
    return expand(
        "results/predictions/{model}/{corruption}/group-{group}.parquet",
        model=wildcards.model,
        corruption=wildcards.corruption,
        group=vconfig.group_ids(config, wildcards.corruption),
    )


def all_shard_files(wildcards=None):
    return [
        f
        for c in CORRUPTIONS
        for f in expand(
            "results/testsets/{corruption}/shard-{shard}.parquet",
            corruption=c,
            shard=vconfig.shard_ids(config, c),
        )
    ]


def imagenet_c_files(wildcards=None):
    return expand("results/imagenet-c/{corruption}.parquet", corruption=IMAGENET_C)


def metrics_files(wildcards=None):
    return expand(
        "results/estimates/{model}/{corruption}/metrics.parquet",
        model=MODELS,
        corruption=CORRUPTIONS,
    )


def corruption_params(wildcards):
    """The config entry of one corruption (only it: other corruptions' changes do not rerun it)."""
    return vconfig.corruption_options(config, wildcards.corruption)


def corruption_n_samples(wildcards):
    return vconfig.n_samples(config, wildcards.corruption)


def model_entry(wildcards):
    """The config entry of one model (only it: adding a model reruns nothing of the others)."""
    return dict(config["models"][wildcards.model])


def final_outputs(wildcards=None):
    return [
        "results/tables/coverage.csv",
        "results/tables/vcr_metrics.csv",
        *figure_outputs(),
    ]
