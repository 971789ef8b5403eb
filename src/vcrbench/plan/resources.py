"""What each rule's jobs need: memory (MB) and run time (minutes), sized from the job and grown
with every attempt.

Rules declare ``resources: **PLAN.resources("rule")``. Every value is a function of the job's
``wildcards`` and ``attempt`` (Snakemake passes the attempt, 1 for the first run of a job, 2 for
its first retry, …): the first attempt's value times the attempt number, so a job that ran out of
memory or time is retried with twice, then three times, what it had (the SLURM profile's
``retries``). The first attempt's value is

- a fixed amount per rule (:data:`DEFAULT`, :data:`RULES`) for jobs whose size the config does
  not change much;
- for the jobs that handle images, a base plus a cost per image of the job: a generation job
  handles one shard (``sampling.shard_size`` samples), an inference job one group of shards
  (``inference.shards_per_job`` × ``shard_size`` samples) or the clean set;
- for fine-tuning, its training images held in memory (:func:`vcrbench.plan.retrain.finetune_mem_mb`);
- for inference, also the model: ``models.<name>.resources`` in the config sets ``mem_mb`` and
  ``runtime`` (minutes for one group's job; a job of another size scales with its images)
  outright, or gives ``params_m``, the model's parameters in millions, from which both are
  estimated (:func:`inference_mem_mb`, :func:`inference_images_per_second`).

The per-image costs are planning figures with a margin, not measurements of any cluster: see
docs/corruptions.md and docs/models.md for what was measured. The first attempt of every rule the
scale rehearsal measured covers its measured peak memory and time with :data:`HEADROOM`
(benchmarks/figures/rehearsal.json; tested). What grows with the attempt stops at the config's
``limits`` (the partitions' ``max_runtime`` and ``max_mem_mb``), so a retry never asks for more
than any partition gives.

The GPU is the rules' too: inference and fine-tuning jobs declare ``gpu: 1`` and
``cpus_per_gpu`` here (unless their device is ``cpu``), so no profile's or command line's
``--set-resources`` for some rule can drop it. Threads are the workflow profile's
(``profiles/default``); partitions and accounts the user's profile's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

#: What a rule without an entry gets at its first attempt: a small CPU job.
DEFAULT: dict[str, int] = {"mem_mb": 2000, "runtime": 10}

#: The rules that need more than :data:`DEFAULT` (first attempt; image rules add per-image time).
RULES: dict[str, dict[str, int]] = {
    "prepare_clean_set": {"mem_mb": 2000, "runtime": 30},
    "sample_manifest": {"mem_mb": 4000, "runtime": 120},
    "generate_shard": {"mem_mb": 2000, "runtime": 10},
    "generate_imagenet_c": {"mem_mb": 2000, "runtime": 10},
    "coverage_table": {"mem_mb": 4000, "runtime": 30},
    "predict_clean": {"mem_mb": 6000, "runtime": 10},
    "predict_group": {"mem_mb": 6000, "runtime": 10},
    "map_human_conditions": {"mem_mb": 4000, "runtime": 60},
    "estimate_human_curves": {"mem_mb": 4000, "runtime": 30},
    "geirhos_dnn_table": {"mem_mb": 4000, "runtime": 30},
    "geirhos_conditions_table": {"mem_mb": 4000, "runtime": 10},
    "geirhos_trained_table": {"mem_mb": 4000, "runtime": 60},
    "estimate_curves": {"mem_mb": 4000, "runtime": 30},
    "zero_shot_tables": {"mem_mb": 4000, "runtime": 30},
    "clean_correct": {"mem_mb": 4000, "runtime": 120},
    "zero_shot_unseen_only": {"mem_mb": 8000, "runtime": 60},
    "prepare_retrain_pool": {"mem_mb": 4000, "runtime": 120},
    "check_pool_overlap": {"runtime": 60},
    "finetune_model": {"runtime": 720},
}

#: Rules sized as another (``use rule … with:`` in the rule files: the same jobs on other data).
SAME_AS: dict[str, str] = {
    "predict_imagenet_c": "predict_group",
    "generate_retrain_shard": "generate_shard",
    "sample_retrain_manifest": "sample_manifest",
}

#: The rules whose jobs need a GPU (unless their device is ``cpu``), after :data:`SAME_AS`.
GPU_RULES = ("predict_clean", "predict_group", "finetune_model")
#: CPUs to feed one GPU (DataLoader workers and the main process): the threads that
#: ``profiles/default`` gives these rules.
CPUS_PER_GPU = 8
#: What a first attempt asks beyond the scale rehearsal's measured peak (time and memory).
HEADROOM = 1.2

#: Seconds per image of a one-core generation job (corrupt, measure Δv, write): about four times
#: the slowest corruption's measured mean (benchmarks/bench_generation.py), for slower nodes.
GENERATION_SECONDS_PER_IMAGE = 0.05
#: Seconds per image of preparing the clean set (decode, resize, crop; two threads).
PREPARE_SECONDS_PER_IMAGE = 0.05
#: The parameter count (millions) assumed for a model without a ``resources`` entry: a
#: ResNet-50/ViT-B-sized network.
DEFAULT_PARAMS_M = 100.0


def inference_mem_mb(params_m: float) -> int:
    """Host memory of an inference job: the process, DataLoader workers and batches (6 GB), and
    the model's weights held as float32 up to three times while loading (12 MB per million
    parameters: 6.3 GB for a ResNet-50, 19.6 GB for DINOv2 ViT-g/14)."""
    return int(6000 + 12 * params_m)


def inference_images_per_second(params_m: float, device: str) -> float:
    """Planned throughput: 2,000 images/s on a GPU for a ResNet-50-sized model (25 M
    parameters), falling in proportion to the parameters above that (45 images/s for
    ViT-g/14); a CPU job (``inference.device: cpu``) 50 times slower. Deliberately low, so
    jobs fit the first time on older GPUs (docs/models.md)."""
    rate = 2000.0 * 25.0 / max(float(params_m), 25.0)
    return rate / 50.0 if device == "cpu" else rate


def _minutes(seconds: float) -> int:
    return math.ceil(seconds / 60.0)


def _inference(config: Mapping, rule: str, clean_images: int) -> dict[str, Callable]:
    """Memory and time of an inference job from its model and its images."""
    from vcrbench.plan.config import model_entries

    entries = model_entries(config)

    def own(wildcards) -> dict:
        """The job's model's ``resources`` entry (empty without one)."""
        return dict(entries[wildcards.model].get("resources") or {})

    base = RULES[rule]
    group_images = config["inference"]["shards_per_job"] * config["sampling"]["shard_size"]
    images = clean_images if rule == "predict_clean" else group_images
    device = config["inference"]["device"]

    def mem_mb(wildcards) -> int:
        given = own(wildcards)
        if "mem_mb" in given:
            return given["mem_mb"]
        return inference_mem_mb(given.get("params_m", DEFAULT_PARAMS_M))

    def runtime(wildcards) -> int:
        given = own(wildcards)
        if "runtime" in given:
            return math.ceil(given["runtime"] * max(1.0, images / group_images))
        rate = inference_images_per_second(given.get("params_m", DEFAULT_PARAMS_M), device)
        return base["runtime"] + _minutes(images / rate)

    return {"mem_mb": mem_mb, "runtime": runtime}


def _sized(config: Mapping, rule: str, clean_images: int) -> dict[str, int]:
    """First-attempt values of the rules whose jobs handle a number of images."""
    base = dict(RULES.get(rule, {}))
    shard = config["sampling"]["shard_size"]
    if rule in ("generate_shard", "generate_imagenet_c"):
        base["runtime"] += _minutes(shard * GENERATION_SECONDS_PER_IMAGE)
    elif rule == "prepare_clean_set":
        base["runtime"] += _minutes(clean_images * PREPARE_SECONDS_PER_IMAGE)
        # the images are written through a memory map, whose written pages count as resident:
        # the whole array (crop x crop x 3 bytes per image) at the end: 7,364 MB peak RSS for
        # 50,000 images of 224 x 224 in the scale rehearsal (benchmarks/figures/rehearsal.json)
        crop = int(config["dataset"]["crop"])
        base["mem_mb"] += math.ceil(clean_images * crop * crop * 3 / 2**20)
    return base


def _grows(first: int | Callable, limit: int) -> Callable:
    """A resource function: the first attempt's value (a number, or a function of the job's
    wildcards) times the attempt, at most ``limit`` (the first attempt's value if that is more:
    a job that cannot fit is the partitions' problem to report, not ours to hide)."""

    def resource(wildcards, attempt) -> int:
        value = int(first(wildcards) if callable(first) else first)
        return max(value, min(value * int(attempt), limit))

    return resource


def gpu_resources(config: Mapping, rule: str) -> dict[str, int]:
    """``gpu`` and ``cpus_per_gpu`` of a job of ``rule``: one GPU for inference and fine-tuning
    unless their device is ``cpu``, nothing for other rules. Fixed: a retry gets the same GPU."""
    rule = SAME_AS.get(rule, rule)
    if rule not in GPU_RULES:
        return {}
    section = config["retrain"] if rule == "finetune_model" else config["inference"]
    if str(section["device"]) == "cpu":
        return {}
    return {"gpu": 1, "cpus_per_gpu": CPUS_PER_GPU}


def rule_resources(
    config: Mapping, rule: str, clean_images: int, **computed: Callable | int
) -> dict[str, Callable]:
    """The resources of ``rule``: :data:`DEFAULT`, the rule's own sizing, then ``computed``
    values (numbers or functions of the job's wildcards, e.g. a fine-tuning's memory from its
    training set); each a function of ``(wildcards, attempt)`` growing with the attempt up to
    the config's ``limits``; plus the job's GPU (:func:`gpu_resources`)."""
    rule = SAME_AS.get(rule, rule)
    first: dict[str, int | Callable] = {**DEFAULT, **_sized(config, rule, clean_images)}
    if rule in ("predict_clean", "predict_group"):
        first.update(_inference(config, rule, clean_images))
    elif rule == "finetune_model":
        from vcrbench.plan.retrain import finetune_mem_mb

        first["mem_mb"] = lambda wildcards: finetune_mem_mb(config, wildcards.run)
    first.update(computed)
    caps = {"mem_mb": config["limits"]["max_mem_mb"], "runtime": config["limits"]["max_runtime"]}
    grown = {name: _grows(value, caps.get(name, 2**31)) for name, value in first.items()}
    return {**grown, **gpu_resources(config, rule)}
