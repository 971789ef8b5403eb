# Config validation, derived lists, wildcard constraints and named input functions.
# Any logic beyond looking things up lives in the vcrbench library.
import re
from pathlib import Path

import vcrbench.config as vconfig
from vcrbench.config import canonical

# Validate against config/config.schema.yaml (filling defaults) as snakemake.utils.validate does,
# with messages that name the key (`sampling.n_samples`), then check names against the registries.
try:
    vconfig.validate_schema(
        config, Path(workflow.basedir) / "config" / "config.schema.yaml"
    )
    vconfig.check(config)
except vconfig.ConfigError as exc:
    raise WorkflowError(f"invalid config: {exc}") from None

CORRUPTIONS = vconfig.corruption_names(config)
MODELS = vconfig.model_names(config)
IMAGENET_C = vconfig.imagenet_c_corruptions(config)
HUMANS = vconfig.humans_settings(config)
HUMAN_REFERENCES = vconfig.human_references(config)  # corruption -> (reference, how)
HUMAN_REFS = vconfig.references_in_use(config)
GEIRHOS_REFS = vconfig.geirhos_references(config)

# The software of every rule (for `--software-deployment-method conda`; relative to rules/).
VCRBENCH_ENV = "../envs/vcrbench.yaml"

CLEAN_IMAGES = "results/dataset/images.npy"
CLEAN_INDEX = "results/dataset/index.parquet"


def _alternatives(names):
    return "|".join(re.escape(n) for n in names)


wildcard_constraints:
    corruption=_alternatives(CORRUPTIONS),
    model=_alternatives(MODELS),
    shard=r"\d{5}",
    group=r"\d{5}",
    reference=_alternatives(HUMAN_REFS) if HUMAN_REFS else r"(?!)",


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
    return canonical(vconfig.corruption_options(config, wildcards.corruption))


def corruption_n_samples(wildcards):
    return vconfig.n_samples(config, wildcards.corruption)


def model_entry(wildcards):
    """The config entry of one model (only it: adding a model reruns nothing of the others)."""
    return canonical(vconfig.model_entries(config)[wildcards.model])


def model_weights(wildcards):
    return vconfig.model_weights(config, wildcards.model)


def human_reference(wildcards):
    """Name, provenance and folder of the human reference of a corruption (None if it has none)."""
    name, how = HUMAN_REFERENCES[wildcards.corruption]
    return {"name": name, "how": how, "dir": f"results/humans/{name}" if name else None}


def human_reference_files(wildcards):
    name, _ = HUMAN_REFERENCES[wildcards.corruption]
    if name is None:
        return []
    return expand(
        "results/humans/{reference}/{table}.parquet",
        reference=name,
        table=["bins", "curves", "summary", "replicates"],
    )


def human_reference_entry(wildcards):
    return canonical(HUMANS["references"][wildcards.reference])


def human_mapping_options(wildcards):
    from vcrbench.humans.stages import mapping_options

    return canonical(mapping_options(HUMANS, wildcards.reference))


def human_reference_corruption_options(wildcards):
    """Config options of the corruption a reference holds (only it: adding other corruptions
    does not redo the mapping)."""
    from vcrbench.humans.transfer import reference_corruption

    entry = HUMANS["references"][wildcards.reference]
    corruption = reference_corruption(wildcards.reference, entry)
    return canonical({corruption: config["corruptions"].get(corruption) or {}})


def prediction_files(wildcards=None):
    """Every prediction file: on clean images, on each test set, on each ImageNet-C set."""
    files = []
    for model in MODELS:
        files.append(f"results/predictions/{model}/clean.parquet")
        for corruption in CORRUPTIONS:
            files += expand(
                "results/predictions/{model}/{corruption}/group-{group}.parquet",
                model=model,
                corruption=corruption,
                group=vconfig.group_ids(config, corruption),
            )
        files += expand(
            "results/predictions/{model}/imagenet-c/{corruption}.parquet",
            model=model,
            corruption=IMAGENET_C,
        )
    return files


def retrain_logs(wildcards=None):
    from vcrbench.retrain import run_names

    return [
        f"results/retrain/{run}/training_log.{ext}"
        for run in run_names(config)
        for ext in ("csv", "png")
    ]


def final_outputs(wildcards=None):
    """What `snakemake` builds: the test sets and predictions are products in their own right
    (and listing them means a deleted shard is rebuilt, with what depends on it)."""
    outputs = [
        *all_shard_files(),
        *imagenet_c_files(),
        *prediction_files(),
        "results/tables/coverage.csv",
        "results/tables/vcr_metrics.csv",
        *retrain_logs(),
    ]
    if GEIRHOS_REFS:
        outputs.append("results/tables/geirhos_dnn_vs_humans.csv")
    return outputs + figure_outputs()
