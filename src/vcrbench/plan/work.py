"""What one job does, in images and seconds: the plan's estimate for each job, from which both
the cost plan (:mod:`vcrbench.plan.cost`, ``make plan``) and the job's first-attempt time limit
(:mod:`vcrbench.plan.resources`) are made, so the two cannot drift apart.

A job's **images** are its own: a generation job's shard (``sampling.shard_size`` samples, fewer
in a set's last shard), an inference job's clean set or its group of shards of one set (a VCR set
of 50,000 or an ImageNet-C set of 250,000 under config/paper.yaml, or the part of it the group
holds), a fine-tuning run's samples x epochs.

A job's **estimate** is its start-up plus its images at a per-image cost:

- start-up: Snakemake's start in the job and the script's (imports, and for inference the model
  built), wall seconds measured by ``benchmarks/bench_job_overhead.py``
  (``data/planning/job_overhead.json``);
- generation: milliseconds per image of its corruption, measured on one core by
  ``benchmarks/bench_generation.py`` (``data/planning/generation.json``); a corruption not
  measured is costed at the slowest one measured;
- inference: images / the published images per second of the model's architecture on one GPU
  (``data/planning/gpu_throughput.json``; timm's RTX 4090 mixed-precision benchmark), or, for an
  architecture with no published rate, the rate assumed from its parameters
  (:func:`assumed_rate`, ``models.<name>.resources.params_m``); on ``device: cpu`` 50 times
  slower; fine-tuning at the base model's rate / :data:`TRAINING_COST_FACTOR`.

The first attempt asks for :data:`REQUEST_FACTOR` times the estimate, rounded up to whole
minutes (a SLURM time limit's resolution; at least one), so a request lies between twice the
plan's estimate and that plus one minute; every retry asks for the first attempt's time times the
attempt number (:mod:`vcrbench.plan.resources`).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Mapping
from importlib import resources as importlib_resources
from types import SimpleNamespace

from vcrbench.models.sources import SOURCES
from vcrbench.plan import config as cfg

#: A job's first-attempt time limit against the plan's estimate for it.
REQUEST_FACTOR = 2.0
#: A training step (forward and backward) against an inference forward pass: a rule of thumb
#: for the fine-tuning plan, not a measurement.
TRAINING_COST_FACTOR = 3.0
#: Rules whose jobs run a model on a GPU (after ``use rule ... as``), and those that corrupt images.
INFERENCE_RULES = ("predict_clean", "predict_group", "predict_imagenet_c", "predict_model")
GENERATION_RULES = ("generate_shard", "generate_imagenet_c", "generate_retrain_shard")
#: Planned inference throughput of an architecture with no published rate: 2,000 images/s for a
#: ResNet-50-sized model (25 M parameters), falling in proportion to the parameters above that.
ASSUMED_RATE_AT_25M = 2000.0
#: Parameters (millions) assumed for a model whose entry gives none: a ResNet-50/ViT-B size.
DEFAULT_PARAMS_M = 100.0
#: How much slower inference on ``device: cpu`` is planned to be than on a GPU.
CPU_SLOWDOWN = 50.0


@functools.cache
def figures(name: str) -> dict:
    """One table of planning figures, ``data/planning/<name>.json`` (generation,
    gpu_throughput, job_overhead, local_jobs): each file says where its numbers come from."""
    path = importlib_resources.files("vcrbench") / "data" / "planning" / f"{name}.json"
    return json.loads(path.read_text())


def assumed_rate(params_m: float) -> float:
    """Images/s assumed on one GPU for a model of ``params_m`` million parameters
    (:data:`ASSUMED_RATE_AT_25M`, falling in proportion above 25 M)."""
    return ASSUMED_RATE_AT_25M * 25.0 / max(float(params_m), 25.0)


def architecture(entry: Mapping, aliases: Mapping[str, str]) -> str:
    """The architecture name a model entry is looked up under in the throughput table.

    The source says it (its ``throughput_name``, registered with it): timm ids lose their
    pretrained tag (``resnet18.fb_swsl_ig1b_ft_in1k`` -> ``resnet18``); torchvision and checkpoint
    entries use their ``id``; other sources are ``source:id``, which ``aliases`` may map to a
    listed architecture.
    """
    source = entry.get("source", "")
    if source in SOURCES:
        name = SOURCES[source].architecture(entry)
    else:
        name = f"{source}:{entry.get('id', '')}"
    return aliases.get(name, name)


def published_rate(entry: Mapping) -> float | None:
    """The published images/s of the entry's architecture on one GPU, or None if none is."""
    table = figures("gpu_throughput")
    rate = table["architectures"].get(architecture(entry, table.get("aliases", {})))
    return None if rate is None else float(rate)


def inference_rate(config: Mapping, model: str) -> tuple[float, str]:
    """Images/s of ``model``'s inference, and where the figure comes from (``published`` or
    ``assumed``); on ``inference.device: cpu`` :data:`CPU_SLOWDOWN` times slower."""
    entry = cfg.model_entries(config)[model]
    rate, source = published_rate(entry), "published"
    if rate is None:
        params_m = (entry.get("resources") or {}).get("params_m", DEFAULT_PARAMS_M)
        rate, source = assumed_rate(params_m), "assumed"
    if str(config["inference"]["device"]) == "cpu":
        rate /= CPU_SLOWDOWN
    return rate, source


def _samples_in(total: int, shard_size: int, first_shard: int, shards: int) -> int:
    """Samples held by ``shards`` shards from ``first_shard`` of a set of ``total`` samples."""
    start = first_shard * shard_size
    return max(0, min(total, start + shards * shard_size) - start)


def model_images(config: Mapping, clean_images: int) -> int:
    """The images one model predicts in all: the clean set, every test set, every ImageNet-C set
    (the one job of rule ``predict_model``, where :func:`inference_per_model`)."""
    sets = sum(cfg.n_samples(config, c) for c in cfg.corruption_names(config))
    sets += sum(
        cfg.imagenet_c_samples(config, c, clean_images) for c in cfg.imagenet_c_corruptions(config)
    )
    return clean_images + sets


def inference_per_model(config: Mapping, clean_images: int) -> bool:
    """Whether each model is predicted in one job (rule ``predict_model``, the model loaded
    once), not one job per set and group (``inference.model_job_max_images``)."""
    return model_images(config, clean_images) <= int(config["inference"]["model_job_max_images"])


def job_images(config: Mapping, rule: str, wildcards, clean_images: int) -> int:
    """The images one job of ``rule`` handles (module docstring); 0 for rules that handle none."""
    shard = int(config["sampling"]["shard_size"])
    per_job = int(config["inference"]["shards_per_job"])
    if rule == "predict_clean":
        return clean_images
    if rule == "predict_model":
        return model_images(config, clean_images)
    if rule == "predict_group":
        total = cfg.n_samples(config, wildcards.corruption)
        return _samples_in(total, shard, int(wildcards.group) * per_job, per_job)
    if rule == "predict_imagenet_c":
        total = cfg.imagenet_c_samples(config, wildcards.corruption, clean_images)
        return _samples_in(total, shard, int(wildcards.group) * per_job, per_job)
    if rule == "generate_shard":
        return _samples_in(
            cfg.n_samples(config, wildcards.corruption), shard, int(wildcards.shard), 1
        )
    if rule == "generate_imagenet_c":
        total = cfg.imagenet_c_samples(config, wildcards.corruption, clean_images)
        return _samples_in(total, shard, int(wildcards.shard), 1)
    if rule == "generate_retrain_shard":
        from vcrbench.plan import retrain

        total = retrain.trainset_n_samples(config, wildcards.run, wildcards.corruption)
        return _samples_in(total, shard, int(wildcards.shard), 1)
    if rule == "finetune_model":
        from vcrbench.plan import retrain

        spec = retrain.run_settings(config, wildcards.run)
        return int(spec["n_samples"]) * int(spec["epochs"])
    return 0


def generation_ms_per_image(corruption: str) -> float:
    """Milliseconds per image of a one-core generation job of ``corruption`` (the slowest
    measured corruption's figure for one not measured)."""
    measured = figures("generation")["corruptions"]
    known = measured.get(corruption)
    if known is not None:
        return float(known["ms_per_image"])
    return max(float(v["ms_per_image"]) for v in measured.values())


def startup_seconds(script: str) -> float:
    """Wall seconds a submitted job spends before its work: Snakemake's start and the script's
    (``generate`` or ``predict``), as measured (``job_overhead.json``)."""
    wall = figures("job_overhead")["seconds"]
    return float(wall["snakemake"]) + float(wall[script])


def job_seconds(config: Mapping, rule: str, wildcards, clean_images: int) -> float | None:
    """The plan's estimate of one job's wall time (seconds), or None for a rule the plan does
    not estimate per job (those keep a fixed time limit, :mod:`vcrbench.plan.resources`)."""
    images = job_images(config, rule, wildcards, clean_images)
    if rule in GENERATION_RULES:
        corruption = wildcards.corruption
        return startup_seconds("generate") + images * generation_ms_per_image(corruption) / 1e3
    if rule in INFERENCE_RULES:
        rate, _ = inference_rate(config, wildcards.model)
        return startup_seconds("predict") + images / rate
    if rule == "finetune_model":
        from vcrbench.plan import retrain

        rate, _ = inference_rate(config, retrain.base_name(config, wildcards.run))
        return startup_seconds("predict") + images * TRAINING_COST_FACTOR / rate
    return None


def request_minutes(seconds: float) -> int:
    """The first attempt's time limit (minutes) for a job estimated at ``seconds``:
    :data:`REQUEST_FACTOR` times it, in whole minutes, at least one."""
    return max(1, math.ceil(REQUEST_FACTOR * seconds / 60.0))


def run_seconds(
    config: Mapping, jobs: Iterable[tuple[str, Mapping[str, str]]], clean_images: int, cores: int
) -> float:
    """The plan's estimate of a run's wall time (seconds) on ``cores`` cores: the ``(rule,
    wildcards)`` ``jobs``' estimates (:func:`job_seconds`), spread over the cores as if every
    job took one, and never less than the longest job. A rule the plan does not estimate per
    job counts as one of its jobs took in the embedded default's run (``local_jobs.json``,
    ``benchmarks/local_job_seconds.py``), or a script's start-up where that run had none."""
    measured = figures("local_jobs")["seconds"]
    small = float(figures("job_overhead")["seconds"]["generate"])
    seconds = []
    for rule, wildcards in jobs:
        estimate = job_seconds(config, rule, SimpleNamespace(**wildcards), clean_images)
        seconds.append(float(measured.get(rule, small)) if estimate is None else estimate)
    return max(sum(seconds) / max(1, cores), max(seconds, default=0.0))


def plan_line(
    config: Mapping,
    jobs: list[tuple[str, Mapping[str, str]]],
    clean_images: int,
    cores: int | None,
) -> str:
    """The run's plan in one line, printed at its start: the jobs to run and, on a machine's
    ``cores`` (None on a cluster), :func:`run_seconds`."""
    if not jobs:
        return "vcrbench: plan: nothing to run"
    rules = len({rule for rule, _ in jobs})
    line = f"vcrbench: plan: {_count(len(jobs), 'job')} of {_count(rules, 'rule')} to run"
    if cores is None:
        return f"{line} (`make plan` for their cost)"
    minutes = run_seconds(config, jobs, clean_images, cores) / 60
    about = f"about {minutes:.0f} min" if minutes >= 1 else "under a minute"
    return f"{line}, {about} on {_count(cores, 'core')} (the plan's estimate, docs/scale.md)"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
