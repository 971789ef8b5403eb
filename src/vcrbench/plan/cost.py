"""What a config costs before it runs: jobs per rule, disk per output kind, CPU core-hours and
GPU-hours.

Nothing here runs a stage. The inputs are the config (through the plan's own derivations), the
number of jobs per rule that Snakemake's dry run plans (:func:`parse_job_stats`), and two tables of
figures given as plain mappings:

- ``generation``: per corruption, milliseconds per image of a ``generate_shard`` job step
  (corrupt + Δv + write, one core) and KiB per image of the written shard, as measured by
  ``benchmarks/bench_generation.py --figures-out`` on a named machine;
- ``throughput``: published images per second per model architecture on a named GPU, with their
  source, and aliases from this project's model entries to those architecture names.

Totals of images (and so of core-hours, GPU-hours and disk) follow from the config alone, so they
stay right however a stage is cut into jobs; the job counts come from the DAG itself. A figure
that is missing (a corruption not benchmarked, an architecture without a published rate) is
reported as unknown, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import SimpleNamespace

import pandas as pd

from vcrbench.plan import config as cfg
from vcrbench.plan import work

_STATS_ROW = re.compile(r"^(\w+)\s+(\d+)\s*$")
_GROUP_JOB = re.compile(r"^\[[^\]]*\] Group job (\S+) \(", re.M)
_TOP_JOB = re.compile(r"^(local)?rule (\w+):$", re.M)
# a job's header and its lines, indented further (jobs of a group job are indented themselves)
_JOB = re.compile(r"^([ \t]*)(local)?rule (\w+):\n((?:\1[ \t]+.*\n?)*)", re.M)

#: Rules whose jobs hold a GPU (after ``use rule ... as``): inference and fine-tuning.
GPU_RULES = (*work.INFERENCE_RULES, "finetune_model")
#: Rules whose jobs are a generation script (CPU).
GENERATION_RULES = work.GENERATION_RULES
#: Cores a generation group job holds: one (its jobs take the group's one ``cpu_slot``,
#: :data:`vcrbench.plan.resources.SLOT_RULES`).
GENERATION_CORES = 1


def _job_field(block: str, name: str) -> dict[str, str]:
    """``key=value, …`` of the line ``name:`` of a dry run's job block."""
    found = {}
    for line in block.splitlines():
        line = line.strip()
        if line.startswith(f"{name}:"):
            for part in line[len(name) + 1 :].split(","):
                key, _, value = part.strip().partition("=")
                found[key] = value
    return found


def parse_jobs(text: str) -> list[dict]:
    """Every job of a dry run's full output (not ``--quiet``), group members included: its
    ``rule``, ``wildcards`` and first-attempt ``resources`` (strings, as printed) and whether it
    is ``local`` (printed as ``localrule``: it runs where Snakemake runs; a real run prints it,
    Snakemake 9.27's dry runs print every job as ``rule``)."""
    return [
        {
            "rule": m.group(3),
            "wildcards": _job_field(m.group(4), "wildcards"),
            "resources": _job_field(m.group(4), "resources"),
            "local": bool(m.group(2)),
        }
        for m in _JOB.finditer(text)
    ]


def parse_submissions(text: str, local_rules=()) -> dict[str, dict[str, int]]:
    """What a cluster run submits, from a dry run's full output (not ``--quiet``): ``groups``,
    group jobs per group (``infer-<model>`` counted as ``infer``), ``jobs``, jobs submitted
    alone per rule, and ``local``, jobs of local rules (printed ``localrule`` by a cluster's dry
    run, or of ``local_rules``, :data:`vcrbench.plan.cluster.LOCAL_RULES`, for a local dry run):
    they run where Snakemake runs and are not submitted. A job of a group is printed indented
    under its group's line; a job alone at the start of a line."""
    local_rules = set(local_rules)
    groups: dict[str, int] = {}
    for name in _GROUP_JOB.findall(text):
        key = name.split("-", 1)[0]
        groups[key] = groups.get(key, 0) + 1
    jobs: dict[str, int] = {}
    local: dict[str, int] = {}
    for is_local, rule in _TOP_JOB.findall(text):
        bucket = local if is_local or rule in local_rules else jobs
        bucket[rule] = bucket.get(rule, 0) + 1
    return {"groups": groups, "jobs": jobs, "local": local}


def parse_job_stats(text: str) -> dict[str, int]:
    """Jobs per rule from the "Job stats" table a Snakemake dry run prints (the first one)."""
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "Job stats:")
    except StopIteration:
        raise ValueError("no 'Job stats:' table in the dry run's output") from None
    jobs: dict[str, int] = {}
    for line in lines[start + 1 :]:
        text_ = line.strip()
        if text_.startswith("job ") or (text_ and set(text_) <= set("- ")):
            continue  # the header and its rule
        m = _STATS_ROW.match(text_)
        if m is None or m.group(1) == "total":
            break
        jobs[m.group(1)] = int(m.group(2))
    if not jobs:
        raise ValueError("the dry run's 'Job stats:' table lists no jobs")
    return jobs


def image_counts(config: Mapping, n_clean: int) -> pd.DataFrame:
    """Images each generation output holds: ``kind`` (vcr, imagenet-c), ``corruption``,
    ``images``."""
    rows = [
        {"kind": "vcr", "corruption": c, "images": cfg.n_samples(config, c)}
        for c in cfg.corruption_names(config)
    ]
    rows += [
        {
            "kind": "imagenet-c",
            "corruption": c,
            "images": cfg.imagenet_c_samples(config, c, n_clean),
        }
        for c in cfg.imagenet_c_corruptions(config)
    ]
    return pd.DataFrame(rows, columns=["kind", "corruption", "images"])


def cpu_table(images: pd.DataFrame, generation: Mapping[str, Mapping]) -> pd.DataFrame:
    """Core-hours and disk of every generation output (unknown figures stay NaN)."""
    out = images.copy()
    out["ms_per_image"] = [
        generation.get(c, {}).get("ms_per_image", float("nan")) for c in out["corruption"]
    ]
    out["kib_per_image"] = [
        generation.get(c, {}).get("kib_per_image", float("nan")) for c in out["corruption"]
    ]
    out["core_hours"] = out["images"] * out["ms_per_image"] / 3.6e6
    out["disk_gib"] = out["images"] * out["kib_per_image"] / 2**20
    return out


def gpu_table(
    config: Mapping, images_per_model: int, throughput: Mapping[str, float], aliases
) -> pd.DataFrame:
    """GPU-hours per model: every image it predicts at the published rate of its architecture."""
    rows = []
    for name, entry in cfg.model_entries(config).items():
        arch = work.architecture(entry, aliases)
        rate = throughput.get(arch)
        rows.append(
            {
                "model": name,
                "architecture": arch,
                "images": images_per_model,
                "images_per_second": float("nan") if rate is None else float(rate),
                "gpu_hours": float("nan") if rate is None else images_per_model / rate / 3600,
            }
        )
    return pd.DataFrame(rows)


def finetune_gpu_hours(config: Mapping, gpus: pd.DataFrame) -> float:
    """GPU-hours of every fine-tuning run: its training images (samples x epochs) at its base
    model's inference rate divided by :data:`work.TRAINING_COST_FACTOR` (NaN where the base has no
    rate)."""
    from vcrbench.plan import retrain

    rates = dict(zip(gpus["model"], gpus["images_per_second"], strict=True))
    hours = 0.0
    for run in retrain.run_names(config):
        spec = retrain.run_settings(config, run)
        rate = rates.get(retrain.base_name(config, run), float("nan"))
        hours += spec["n_samples"] * spec["epochs"] * work.TRAINING_COST_FACTOR / rate / 3600
    return hours


def overhead_table(
    jobs: Mapping[str, int], submissions: Mapping[str, Mapping[str, int]], startup: Mapping
) -> pd.DataFrame:
    """Start-up hours of GPU and generation jobs as the SLURM executor runs them: every job, a
    group's member too, gets its own ``srun`` step with its own Snakemake start
    (``startup["snakemake"]``, seconds) and script start (``startup["predict"]``,
    ``startup["generate"]``); every submission adds the Snakemake start of the cluster job itself
    (which starts its members): n + 1 Snakemake starts for a group job of n jobs."""
    groups, alone = submissions["groups"], submissions["jobs"]
    rows = []
    for what, rules, group, script in (
        ("GPU", GPU_RULES, "infer", "predict"),
        ("generation (CPU)", GENERATION_RULES, "generate", "generate"),
    ):
        n_jobs = sum(jobs.get(r, 0) for r in rules)
        n_submitted = groups.get(group, 0) + sum(alone.get(r, 0) for r in rules)
        starts = n_jobs + n_submitted
        seconds = n_jobs * startup[script] + starts * startup["snakemake"]
        rows.append(
            {
                "jobs": what,
                "scripts": n_jobs,
                "submissions": n_submitted,
                "snakemake_starts": starts,
                "hours": seconds / 3600,
            }
        )
    return pd.DataFrame(rows)


def requests_table(
    config: Mapping, jobs: list[dict], clean_images: int, cpu_seconds: Mapping
) -> pd.DataFrame:
    """What the first attempts ask for against the plan's estimate of the same jobs
    (:mod:`vcrbench.plan.work`), from the dry run's jobs (:func:`parse_jobs`): GPU-hours of the
    GPU jobs, core-hours of generation (one core each, :data:`GENERATION_CORES`). ``estimated``
    is the jobs' wall time (start-up and work), ``used`` what they keep busy: the GPU's images, a
    generation job's CPU (its work and the CPU seconds of its starts, ``cpu_seconds``)."""
    rows = []
    for what, rules, cores in (
        ("GPU-hours (inference + fine-tuning)", GPU_RULES, 1),
        ("CPU core-hours, generation", GENERATION_RULES, GENERATION_CORES),
    ):
        chosen = [j for j in jobs if j["rule"] in rules]
        estimated = used = requested = 0.0
        for job in chosen:
            wildcards = SimpleNamespace(**job["wildcards"])
            seconds = work.job_seconds(config, job["rule"], wildcards, clean_images)
            startup = work.startup_seconds("predict" if job["rule"] in GPU_RULES else "generate")
            estimated += seconds
            requested += 60 * int(job["resources"]["runtime"])
            used += seconds - startup
            if job["rule"] in GENERATION_RULES:
                used += cpu_seconds["snakemake"] + cpu_seconds["generate"]
        rows.append(
            {
                "what": what,
                "jobs": len(chosen),
                "used": cores * used / 3600,
                "estimated": cores * estimated / 3600,
                "requested": cores * requested / 3600,
                "requested / estimated": requested / estimated if estimated else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def plan_cost(
    config: Mapping,
    jobs: Mapping[str, int],
    generation: Mapping,
    gpu: Mapping,
    n_clean: int,
    prediction_bytes_per_row: float,
    estimates: Mapping | None = None,
    submissions: Mapping | None = None,
    startup: Mapping | None = None,
    job_list: list[dict] | None = None,
) -> dict[str, pd.DataFrame]:
    """Every table of the cost plan (see the module docstring for the inputs).

    ``generation``: the JSON of ``bench_generation.py --figures-out`` (its ``corruptions``);
    ``gpu``: ``architectures`` (name -> images/s) and ``aliases``; ``estimates``: the measured
    size of one model x corruption's estimates, ``fixed_kib`` plus ``per_replicate_kib`` per
    bootstrap replicate (``estimation.n_boot``); ``submissions``: :func:`parse_submissions`;
    ``startup``: CPU seconds of the start-ups (``job_overhead.json``); ``job_list``: the dry
    run's jobs (:func:`parse_jobs`), for the requests against the estimates.
    """
    images = image_counts(config, n_clean)
    gen = cpu_table(images, generation.get("corruptions", {}))
    per_model = n_clean + int(images["images"].sum())
    gpus = gpu_table(config, per_model, gpu.get("architectures", {}), gpu.get("aliases", {}))
    n_models = len(gpus)
    disk = _disk_rows(config, n_clean, gen, n_models * per_model * prediction_bytes_per_row)
    # every model reads the clean set and every generated image once (weights not counted)
    gpus["reads_gib"] = sum(d["gib"] for d in disk[:3])  # clean set, VCR and ImageNet-C sets
    if estimates:
        n_pairs = n_models * len(cfg.corruption_names(config))
        kib = (
            estimates["fixed_kib"] + estimates["per_replicate_kib"] * config["estimation"]["n_boot"]
        )
        disk.append({"output": "estimates (all models)", "gib": n_pairs * kib / 2**20})
    job_table = pd.DataFrame(
        [{"rule": r, "jobs": n} for r, n in sorted(jobs.items(), key=lambda kv: -kv[1])]
    )
    inference_hours = float(gpus["gpu_hours"].sum(min_count=1))
    totals = {
        "clean images": n_clean,
        "generated images (VCR + ImageNet-C)": int(images["images"].sum()),
        "images predicted per model": per_model,
        "CPU core-hours, generation": float(gen["core_hours"].sum(min_count=1)),
        "GPU-hours, inference": inference_hours,
        "disk GiB": float(pd.DataFrame(disk)["gib"].sum(min_count=1)),
    }
    tables = {}
    if submissions is not None and startup is not None:
        tables["overhead"] = overhead_table(jobs, submissions, startup)
        totals.update(
            _cluster_totals(config, submissions, tables["overhead"], gpus, inference_hours)
        )
    if job_list is not None and startup is not None:
        tables["requests"] = requests_table(config, job_list, n_clean, startup)
        gpu_row, gen_row = tables["requests"].iloc[0], tables["requests"].iloc[1]
        totals["GPU-hours, total: estimated per job (start-up + images)"] = gpu_row["estimated"]
        totals["GPU-hours, total: requested (first attempts)"] = gpu_row["requested"]
        totals["CPU core-hours, generation: used / allocated"] = (
            f"{gen_row['used']:.2f} / {gen_row['estimated']:.2f}"
        )
    totals = pd.DataFrame(
        {"what": list(totals), "value": pd.Series(list(totals.values()), dtype=object)}
    )
    return {
        "jobs": job_table,
        "generation": gen,
        "gpu": gpus,
        "disk": pd.DataFrame(disk),
        **tables,
        "totals": totals,
    }


def _disk_rows(
    config: Mapping, n_clean: int, gen: pd.DataFrame, prediction_bytes: float
) -> list[dict]:
    """Disk of the clean set, the VCR shards, the ImageNet-C sets (from ``gen``) and the
    predictions (``prediction_bytes`` in all)."""
    crop = int(config["dataset"]["crop"])
    return [
        {"output": "clean set (uint8 array)", "gib": n_clean * crop * crop * 3 / 2**30},
        {
            "output": "VCR test-set shards",
            "gib": gen.loc[gen["kind"] == "vcr", "disk_gib"].sum(min_count=1),
        },
        {
            "output": "ImageNet-C comparison sets",
            "gib": gen.loc[gen["kind"] == "imagenet-c", "disk_gib"].sum(min_count=1),
        },
        {"output": "predictions (all models)", "gib": prediction_bytes / 2**30},
    ]


def _cluster_totals(
    config: Mapping,
    submissions: Mapping[str, Mapping[str, int]],
    overhead: pd.DataFrame,
    gpus: pd.DataFrame,
    inference_hours: float,
) -> dict:
    """The totals of a cluster run: submissions, fine-tuning and the start-up overhead of GPU
    and generation jobs (``overhead``: :func:`overhead_table`)."""
    tuning = finetune_gpu_hours(config, gpus)
    gpu_overhead = float(overhead.loc[0, "hours"])
    compute = inference_hours + tuning
    return {
        "cluster submissions": int(
            sum(submissions["groups"].values()) + sum(submissions["jobs"].values())
        ),
        "GPU-hours, fine-tuning": tuning,
        "GPU-hours, compute (inference + fine-tuning)": compute,
        "GPU-hours, start-up overhead": gpu_overhead,
        "GPU-hours, total": compute + gpu_overhead,
        "GPU start-up overhead, % of compute": 100 * gpu_overhead / compute,
        "CPU core-hours, generation start-up": float(overhead.loc[1, "hours"]),
    }


def report(tables: Mapping[str, pd.DataFrame], notes: list[str]) -> str:
    """The plan as text: one titled table per part, then the notes (sources, unknowns)."""

    def number(x) -> str:
        if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and x >= 1000):
            return f"{int(x):,}"
        if isinstance(x, float) and x != x:
            return "unknown"
        return f"{x:,.2f}" if abs(x) >= 1 else f"{x:.3g}"

    def fmt(df: pd.DataFrame) -> str:
        shown = df.copy()
        for col in shown.columns:
            if shown[col].dtype != object or col == "value":
                shown[col] = [x if isinstance(x, str) else number(x) for x in shown[col]]
        return shown.to_string(index=False)

    parts = [
        "## Jobs per rule (Snakemake's dry run)",
        fmt(tables["jobs"]),
        f"total: {int(tables['jobs']['jobs'].sum())}",
        "",
        "## Generation: images, CPU core-hours, disk",
        fmt(tables["generation"]),
        "",
        "## Inference: GPU-hours per model",
        fmt(tables["gpu"]),
        "",
        "## Disk per output kind (GiB)",
        fmt(tables["disk"]),
        "",
    ]
    if "overhead" in tables:
        parts += ["## Start-up overhead (measured per job, see notes)", fmt(tables["overhead"]), ""]
    if "requests" in tables:
        parts += [
            "## First-attempt requests against the plan's estimate, job by job",
            fmt(tables["requests"]),
            "",
        ]
    parts += [
        "## Totals",
        fmt(tables["totals"]),
    ]
    gen, gpus = tables["generation"], tables["gpu"]
    unknown_c = sorted(set(gen.loc[gen["ms_per_image"].isna(), "corruption"]))
    unknown_m = gpus.loc[gpus["images_per_second"].isna(), "model"].tolist()
    if unknown_c:
        parts.append(f"\nno generation figures for: {', '.join(unknown_c)} (left out of totals)")
    if unknown_m:
        parts.append(f"no published throughput for: {', '.join(unknown_m)} (left out of GPU-hours)")
    return "\n".join(parts + [""] + [f"- {n}" for n in notes]) + "\n"
