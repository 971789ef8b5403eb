"""Every file the workflow writes, by name: the one place its layout is spelled.

Templates use Snakemake's ``{wildcard}`` syntax; rules take their inputs and outputs from here (and
chain with ``rules.X.output`` where natural), the plan expands them for targets, and the workflow
scripts :func:`parse` them back into wildcards. Library stages never see this module: they take
plain paths.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from vcrbench.vocab import ESTIMATE_TABLES

RESULTS = "results"

# --------------------------------------------------------------------------- checks before any work
CHECK_IMAGES = f"{RESULTS}/checks/images.json"
CHECK_MODELS = f"{RESULTS}/checks/models.json"
#: The last passed check of the dataset and what it depended on (no job's output: onstart's).
CHECK_DATASET = f"{RESULTS}/checks/dataset.json"
#: Every problem the dataset check found, one a line (no job's output: written when it fails).
CHECK_DATASET_PROBLEMS = f"{RESULTS}/checks/dataset-problems.tsv"

# --------------------------------------------------------------------------- stage I: test sets
CLEAN_IMAGES = f"{RESULTS}/dataset/images.npy"
CLEAN_INDEX = f"{RESULTS}/dataset/index.parquet"
CLEAN_STORED = f"{RESULTS}/dataset/stored.npy"  # dataset.resolution: stored
MANIFEST = f"{RESULTS}/testsets/{{corruption}}/manifest.parquet"
SHARD = f"{RESULTS}/testsets/{{corruption}}/shard-{{shard}}.parquet"
IMAGENET_C_SHARD = f"{RESULTS}/imagenet-c/{{corruption}}/shard-{{shard}}.parquet"
COVERAGE = f"{RESULTS}/tables/coverage.csv"
DV_HISTOGRAMS = f"{RESULTS}/tables/dv_histograms.csv"

# --------------------------------------------------------------------------- inference
PREDICTIONS_CLEAN = f"{RESULTS}/predictions/{{model}}/clean.parquet"
PREDICTIONS_GROUP = f"{RESULTS}/predictions/{{model}}/{{corruption}}/group-{{group}}.parquet"
PREDICTIONS_IMAGENET_C = (
    f"{RESULTS}/predictions/{{model}}/imagenet-c/{{corruption}}/group-{{group}}.parquet"
)

#: A model's weights are in the cache (``inference.weights_cache``): the fetch_weights rule's
#: record.
WEIGHTS_FETCHED = f"{RESULTS}/weights/{{model}}.json"

# --------------------------------------------------------------------------- humans
HUMAN_DIR = f"{RESULTS}/humans/{{reference}}"
HUMAN_TRIALS = f"{HUMAN_DIR}/trials.parquet"
HUMAN_CONDITIONS = f"{HUMAN_DIR}/conditions.parquet"
HUMAN_ESTIMATE = f"{HUMAN_DIR}/{{table}}.parquet"
HUMAN_CURVES = f"{HUMAN_DIR}/curves.parquet"
GEIRHOS_DNN_TABLE = f"{RESULTS}/tables/geirhos_dnn_vs_humans.csv"
GEIRHOS_CONDITIONS = f"{RESULTS}/tables/geirhos_conditions.csv"
SCREENING_TABLE = f"{RESULTS}/tables/screening_tests.csv"
GEIRHOS_TRAINED_TABLE = f"{RESULTS}/tables/geirhos_trained_vs_humans.csv"
GEIRHOS_CONSISTENCY = f"{RESULTS}/tables/geirhos_error_consistency.csv"
MODEL_CONSISTENCY = f"{RESULTS}/tables/model_error_consistency.csv"

# --------------------------------------------------------------------------- estimation
ESTIMATE_DIR = f"{RESULTS}/estimates/{{model}}/{{corruption}}"
MODEL_BINS = f"{ESTIMATE_DIR}/bins.parquet"
MODEL_CURVES = f"{ESTIMATE_DIR}/curves.parquet"
MODEL_METRICS = f"{ESTIMATE_DIR}/metrics.parquet"
MODEL_REPLICATES = f"{ESTIMATE_DIR}/replicate_metrics.parquet"
VCR_METRICS = f"{RESULTS}/tables/vcr_metrics.csv"
#: The choices of this run against the paper's, from the config alone (vcrbench.plan.definitions).
DEFINITIONS = f"{RESULTS}/tables/definitions.csv"
MODEL_DIFFERENCES = f"{RESULTS}/tables/model_differences.csv"
#: Datasets with their own classes (vcrbench.estimation.zeroshot): per class x Δv bin, and class
#: transitions.
ZERO_SHOT_CLASSES = f"{RESULTS}/tables/zero_shot_classes.csv"
ZERO_SHOT_TRANSITIONS = f"{RESULTS}/tables/zero_shot_transitions.csv"
DEFENSES_TABLE = f"{RESULTS}/tables/defenses.csv"
#: Restricted analyses (vcrbench.tables.restricted): samples of clean-correct images, and the
#: unseen-only decision of a zero-shot split; R̂ per row and the curves.
CLEAN_CORRECT = f"{RESULTS}/tables/clean_correct.csv"
CLEAN_CORRECT_CURVES = f"{RESULTS}/tables/clean_correct_curves.csv"
ZERO_SHOT_UNSEEN_ONLY = f"{RESULTS}/tables/zero_shot_unseen_only.csv"
ZERO_SHOT_UNSEEN_ONLY_CURVES = f"{RESULTS}/tables/zero_shot_unseen_only_curves.csv"

# --------------------------------------------------------------------------- figures and tables
IMAGENET_C_ACCURACY = f"{RESULTS}/tables/imagenet_c_accuracy.csv"
#: ImageNet-C's CE, relative CE and (partial) mCE, and means by corruption category.
IMAGENET_C_MCE = f"{RESULTS}/tables/imagenet_c_mce.csv"
#: ImageNet-C accuracy per severity on the images each model classifies correctly when clean.
IMAGENET_C_CLEAN_CORRECT = f"{RESULTS}/tables/imagenet_c_clean_correct.csv"
CORRUPTION_CATEGORIES = f"{RESULTS}/tables/corruption_categories.csv"
HUMAN_SIMILARITY = f"{RESULTS}/tables/human_similarity.csv"
HUMAN_SIMILARITY_CLASSES = f"{RESULTS}/tables/human_similarity_classes.csv"
PAPER_TABLES = f"{RESULTS}/tables/paper"
#: Per-corruption figures: ``kind`` is curves, dv_histograms, hmri_mrsi or imagenet_c_vs_vcr.
FIGURE = f"{RESULTS}/figures/{{kind}}/{{corruption}}.{{ext}}"
#: Fig. 3: every corruption at increasing Δv, beside the per-corruption grids of ``examples``
#: (so no corruption may be called this).
EXAMPLES_OVERVIEW_NAME = "overview"
EXAMPLES_OVERVIEW = f"{RESULTS}/figures/examples/{EXAMPLES_OVERVIEW_NAME}.{{ext}}"
HUMAN_SIMILARITY_FIGURE = f"{RESULTS}/figures/humans/similarity.{{ext}}"
GEIRHOS_DNN_FIGURE = f"{RESULTS}/figures/humans/geirhos_dnn_vs_humans.{{ext}}"
GEIRHOS_TRAINED_FIGURE = f"{RESULTS}/figures/humans/geirhos_trained_vs_humans.{{ext}}"
GEIRHOS_CONSISTENCY_FIGURE = f"{RESULTS}/figures/humans/geirhos_error_consistency.{{ext}}"
MODEL_CONSISTENCY_FIGURE = f"{RESULTS}/figures/model_error_consistency.{{ext}}"
DEFENSES_FIGURE = f"{RESULTS}/figures/defenses.{{ext}}"

# --------------------------------------------------------------------------- retraining
RETRAIN = f"{RESULTS}/retrain"
POOL_IMAGES = f"{RETRAIN}/pool/images.npy"
POOL_INDEX = f"{RETRAIN}/pool/index.parquet"
POOL_CHECK = f"{RETRAIN}/pool/disjoint.json"
TRAIN_MANIFEST = f"{RETRAIN}/{{run}}/trainset/{{corruption}}/manifest.parquet"
TRAIN_SHARD = f"{RETRAIN}/{{run}}/trainset/{{corruption}}/shard-{{shard}}.parquet"
TUNED_MODEL = f"{RETRAIN}/{{run}}/model.pt"
TRAINING_LOG = f"{RETRAIN}/{{run}}/training_log.{{ext}}"
CHECKPOINTS = f"{RETRAIN}/{{run}}/checkpoints"


# --------------------------------------------------------------------------- logs, provenance

#: Where each output's provenance record lives (:func:`provenance`).
PROVENANCE = f"{RESULTS}/provenance"


def job_name(rule: str, output: str) -> str:
    """What names a job of ``rule`` among the rule's others in its log and benchmark files: the
    wildcards of its first ``output``, in order (``{model}/{corruption}/group-{group}``), or the
    rule's name for a rule with one job."""
    parts = [f"{w}-{{{w}}}" if w in ("shard", "group") else f"{{{w}}}" for w in _wildcards(output)]
    return "/".join(parts) or rule


def _wildcards(template: str) -> list[str]:
    """The wildcard names of ``template`` in order of appearance, each once (a wildcard may carry
    its constraint, as Snakemake's outputs do: ``{shard,\\d{5}}``)."""
    found = re.findall(r"\{\s*(\w+?)\s*(?:,(?:[^{}]+|\{\d+(?:,\d+)?\})*)?\}", str(template))
    return list(dict.fromkeys(found))


def log(rule: str, name: str) -> str:
    """A rule's log file: ``results/logs/{rule}/{name}.log`` (``name`` may hold wildcards)."""
    return f"{RESULTS}/logs/{rule}/{name}.log"


def benchmark(rule: str, name: str) -> str:
    """A rule's benchmark file: ``results/benchmarks/{rule}/{name}.tsv``."""
    return f"{RESULTS}/benchmarks/{rule}/{name}.tsv"


def provenance(output: str | Path) -> str:
    """The provenance sidecar of a workflow output: ``results/provenance/<path under
    results>.json`` (e.g. ``results/provenance/tables/vcr_metrics.csv.json``)."""
    path = Path(output).as_posix()
    rel = path[len(RESULTS) + 1 :] if path.startswith(f"{RESULTS}/") else path.lstrip("/")
    return f"{PROVENANCE}/{rel}.json"


# --------------------------------------------------------------------------- helpers


def human_estimates(reference: str = "{reference}") -> list[str]:
    """The estimate files of a human reference (a wildcard pattern by default)."""
    return [HUMAN_ESTIMATE.format(reference=reference, table=t) for t in ESTIMATE_TABLES]


def fill(template: str, **wildcards) -> str:
    """``template`` with its wildcards filled in (every one must be given)."""
    names = set(re.findall(r"{(\w+)}", template))
    missing = sorted(names - set(wildcards))
    if missing:
        raise KeyError(f"{template}: no value for wildcard(s) {missing}")
    return template.format(**{k: v for k, v in wildcards.items() if k in names})


def group(template: str, files: Iterable[str | Path], *keys: str) -> dict:
    """``files`` (paths under ``template``, e.g. an aggregating job's inputs) grouped by the value
    of wildcard ``keys[0]``, or by the tuple of the values of several ``keys``:
    ``{value: [files]}``, groups and files in input order."""
    grouped: dict = {}
    for path in files:
        found = parse(template, path)
        key = found[keys[0]] if len(keys) == 1 else tuple(found[k] for k in keys)
        grouped.setdefault(key, []).append(path)
    return grouped


def index(template: str, files: Iterable[str | Path], key: str) -> dict:
    """``{value of wildcard key: file}`` for ``files`` that hold one file per value."""
    return {parse(template, path)[key]: path for path in files}


def parse(template: str, path: str | Path) -> dict[str, str]:
    """The wildcards of ``path`` under ``template`` (ValueError if it does not match)."""
    pattern = re.escape(template)
    pattern = re.sub(r"\\{(\w+)\\}", r"(?P<\1>[^/]+)", pattern)
    found = re.fullmatch(pattern, Path(path).as_posix())
    if found is None:
        # the workflow may run in another directory: match the end of the path
        found = re.search("(?:^|/)" + pattern + "$", Path(path).as_posix())
    if found is None:
        raise ValueError(f"{path} is not a path of the form {template}")
    return found.groupdict()
