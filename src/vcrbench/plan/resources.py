"""What each rule's jobs need: memory (MB) and run time (minutes), sized from the job and grown
with every attempt.

Rules declare ``resources: **PLAN.resources("rule")``. Every value is a function of the job's
``wildcards`` and ``attempt`` (Snakemake passes the attempt, 1 for the first run of a job, 2 for
its first retry, …): the first attempt's value times the attempt number, so a job that ran out of
memory or time is retried with twice, then three times, what it had (the SLURM profile's
``retries``). The first attempt's value is

- a fixed amount per rule (:data:`DEFAULT`, :data:`RULES`) for jobs whose size the config does
  not change much;
- for the time of the jobs that handle images (generation, inference, fine-tuning): twice the
  plan's estimate for that very job (:mod:`vcrbench.plan.work`: its start-up plus its own images
  at its corruption's measured or its model's published per-image cost), so the request is near
  the work and ``make plan`` can print both side by side;
- for the memory of fine-tuning, its training images held in memory
  (:func:`vcrbench.plan.retrain.finetune_mem_mb`); of preparing the clean set, its array;
- for inference, also the model: ``models.<name>.resources`` in the config sets ``mem_mb`` and
  ``runtime`` (minutes for one group's job; a job of another size scales with its images)
  outright, or gives ``params_m``, the model's parameters in millions, from which memory
  (:func:`inference_mem_mb`) and, with no published rate, throughput are estimated.

A user's ``--set-resources RULE:runtime=N`` is Snakemake's: it sets the value for every attempt.
To keep the growth on retries, give it as an expression of the attempt, which Snakemake evaluates
per job: ``--set-resources 'predict_group:mem_mb=9000*attempt'``.

The per-image costs are planning figures, not measurements of any cluster: see docs/scale.md
for where each comes from. The first attempt of every rule the
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

from vcrbench.plan import work

#: What a rule without an entry gets at its first attempt: a small CPU job.
DEFAULT: dict[str, int] = {"mem_mb": 2000, "runtime": 10}

#: The rules that need more than :data:`DEFAULT` at their first attempt (the time of generation,
#: inference and fine-tuning jobs is the plan's estimate for each job: :func:`_timed`).
RULES: dict[str, dict[str, int]] = {
    "prepare_clean_set": {"mem_mb": 2000, "runtime": 30},
    "sample_manifest": {"mem_mb": 4000, "runtime": 120},
    "generate_shard": {"mem_mb": 2000},
    "generate_imagenet_c": {"mem_mb": 2000},
    "coverage_table": {"mem_mb": 4000, "runtime": 30},
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
}

#: Rules sized as another (``use rule … with:`` in the rule files: the same jobs on other data).
SAME_AS: dict[str, str] = {
    "predict_imagenet_c": "predict_group",
    "generate_retrain_shard": "generate_shard",
    "sample_retrain_manifest": "sample_manifest",
}

#: The rules whose jobs need a GPU (unless their device is ``cpu``), after :data:`SAME_AS`.
GPU_RULES = ("predict_clean", "predict_group", "predict_model", "finetune_model")
#: CPUs to feed one GPU (DataLoader workers and the main process): the threads that
#: ``profiles/default`` gives these rules.
CPUS_PER_GPU = 8
#: Single-threaded rules whose jobs a cluster runs many to a group job (profiles/default's
#: groups): each takes the one ``cpu_slot`` that a group job has (the workflow profile's
#: ``resources``, scoped per group job in the Snakefile), so Snakemake sizes such a group job at
#: one core for the sum of its members' times. The SLURM executor runs a group's members one at a
#: time (its inner Snakemake gets ``--jobs 1``), so a group job sized for several in parallel would
#: hold idle cores (docs/scale.md, "Busy allocations"). Locally they run one at a time too.
SLOT_RULES = (
    "generate_shard",
    "generate_imagenet_c",
    "generate_retrain_shard",
    "estimate_curves",
)
#: What a first attempt asks beyond the scale rehearsal's measured peak (time and memory).
HEADROOM = 1.2

#: Seconds per image of preparing the clean set (decode, resize, crop; two threads).
PREPARE_SECONDS_PER_IMAGE = 0.05


def inference_mem_mb(params_m: float) -> int:
    """Host memory of an inference job: the process, DataLoader workers and batches (6 GB), and
    the model's weights held as float32 up to three times while loading (12 MB per million
    parameters: 6.3 GB for a ResNet-50, 19.6 GB for DINOv2 ViT-g/14)."""
    return int(6000 + 12 * params_m)


def _minutes(seconds: float) -> int:
    return math.ceil(seconds / 60.0)


def _timed(config: Mapping, rule: str, clean_images: int) -> dict[str, Callable]:
    """The time limit of a job the plan estimates (:mod:`vcrbench.plan.work`): twice its
    estimate from its own images (and model). An inference job whose model's entry sets
    ``resources.runtime`` gets that (minutes for a job of ``shards_per_job`` shards), scaled by
    its own images."""
    from vcrbench.plan.config import model_entries

    entries = model_entries(config) if rule in work.INFERENCE_RULES else {}
    group_images = config["inference"]["shards_per_job"] * config["sampling"]["shard_size"]

    def runtime(wildcards) -> int:
        given = (entries.get(getattr(wildcards, "model", None)) or {}).get("resources") or {}
        if "runtime" in given:
            images = work.job_images(config, rule, wildcards, clean_images)
            return math.ceil(given["runtime"] * max(1.0, images / group_images))
        return work.request_minutes(work.job_seconds(config, rule, wildcards, clean_images))

    return {"runtime": runtime}


def _inference_mem(config: Mapping) -> Callable:
    """Memory of an inference job from its model (``resources.mem_mb`` or ``params_m``)."""
    from vcrbench.plan.config import model_entries

    entries = model_entries(config)

    def mem_mb(wildcards) -> int:
        given = dict(entries[wildcards.model].get("resources") or {})
        if "mem_mb" in given:
            return given["mem_mb"]
        return inference_mem_mb(given.get("params_m", work.DEFAULT_PARAMS_M))

    return mem_mb


def _sized(config: Mapping, rule: str, clean_images: int) -> dict[str, int]:
    """First-attempt values of the rules whose size the plan knows before any job."""
    base = dict(RULES.get(rule, {}))
    if rule == "prepare_clean_set":
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


def slot_resources(rule: str) -> dict[str, int]:
    """``cpu_slot: 1`` for the jobs of :data:`SLOT_RULES`, nothing for other rules (see there)."""
    return {"cpu_slot": 1} if rule in SLOT_RULES else {}


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
    sized_as = SAME_AS.get(rule, rule)
    first: dict[str, int | Callable] = {**DEFAULT, **_sized(config, sized_as, clean_images)}
    if rule in (*work.INFERENCE_RULES, *work.GENERATION_RULES, "finetune_model"):
        first.update(_timed(config, rule, clean_images))
    if sized_as in ("predict_clean", "predict_group", "predict_model"):
        first["mem_mb"] = _inference_mem(config)
    elif sized_as == "finetune_model":
        from vcrbench.plan.retrain import finetune_mem_mb

        first["mem_mb"] = lambda wildcards: finetune_mem_mb(config, wildcards.run)
    first.update(computed)
    caps = {"mem_mb": config["limits"]["max_mem_mb"], "runtime": config["limits"]["max_runtime"]}
    grown = {name: _grows(value, caps.get(name, 2**31)) for name, value in first.items()}
    return {**grown, **gpu_resources(config, sized_as), **slot_resources(rule)}
