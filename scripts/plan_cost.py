"""What a config costs before it runs: jobs per rule, cluster submissions, disk, CPU core-hours
and GPU-hours (compute and per-job start-up).

    python scripts/plan_cost.py --configfile config/paper.yaml      # or: make plan CONFIG=...

Jobs per rule come from Snakemake's own dry run of the workflow (``snakemake -n``, in a scratch
working directory), so they follow the rules as they are. Where the config names files that are
not on this machine (the dataset folder, the retraining pool, model checkpoints), empty stand-ins
are made in that scratch directory for the dry run: a plan needs only that they exist. Images per
output follow from the config (:mod:`vcrbench.plan.cost`); per-image costs from the planning
figures the workflow itself sizes its jobs with (``src/vcrbench/data/planning/``, read through
:mod:`vcrbench.plan.work`: generation measured on this project's machine, GPU rates published;
each file says where its numbers come from).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def absolute_paths(node):
    """Every string in the config that names an existing file or folder (relative to the current
    directory), made absolute: the dry run runs in another directory."""
    if isinstance(node, dict):
        return {k: absolute_paths(v) for k, v in node.items()}
    if isinstance(node, list):
        return [absolute_paths(v) for v in node]
    if isinstance(node, str) and node and not Path(node).is_absolute():
        try:
            if Path(node).exists() and ("/" in node or "." in node):
                return str(Path(node).resolve())
        except OSError:
            pass
    return node


def stand_ins(config: dict, workdir: Path) -> list[str]:
    """Point missing inputs at empty stand-ins under ``workdir``; returns what was stood in."""
    from vcrbench.datasets.loading import DATASET_KINDS
    from vcrbench.plan.config import fetched_checkpoint

    made = []
    dataset = config.get("dataset") or {}
    kind = DATASET_KINDS.get(dataset.get("kind"))
    # a stand-in folder, where the plan reads nothing of it (a layout's tree gives its classes)
    if kind and kind.needs_path == "folder" and kind.classes is None and dataset.get("path"):
        if not Path(dataset["path"]).is_dir():
            made.append(f"dataset.path {dataset['path']}")
            dataset["path"] = str(workdir / "stand-in-dataset")
            Path(dataset["path"]).mkdir(exist_ok=True)
        else:  # the dry run runs elsewhere: an absolute path
            dataset["path"] = str(Path(dataset["path"]).resolve())
        labels = dataset.get("labels")
        if labels and not Path(labels).is_file():
            made.append(f"dataset.labels {labels}")
            dataset["labels"] = str(workdir / "stand-in-labels.csv")
            Path(dataset["labels"]).write_text("file,label\n")
        elif labels:
            dataset["labels"] = str(Path(labels).resolve())
    pool = ((config.get("retrain") or {}).get("pool")) or {}
    if pool.get("path") and not Path(pool["path"]).is_dir():
        made.append(f"retrain.pool.path {pool['path']}")
        pool["path"] = str(workdir / "stand-in-pool")
        Path(pool["path"]).mkdir(exist_ok=True)
    elif pool.get("path"):
        pool["path"] = str(Path(pool["path"]).resolve())
    for name, entry in (config.get("models") or {}).items():
        checkpoint = (entry or {}).get("checkpoint")
        if not checkpoint:
            continue
        found = [p for p in (Path(checkpoint), REPO / checkpoint) if p.is_file()]
        if found:  # the dry run works elsewhere: name the file by its absolute path
            entry["checkpoint"] = str(found[0].resolve())
            continue
        if fetched_checkpoint(entry):  # fetch_weights downloads it: the plan needs no file
            continue
        made.append(f"models.{name}.checkpoint {checkpoint}")
        if Path(checkpoint).is_absolute():
            entry["checkpoint"] = str(workdir / "stand-in-weights" / Path(checkpoint).name)
        target = workdir / entry["checkpoint"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()
        entry["checkpoint"] = str(target)  # absolute: the plan is read here and in the dry run
    return made


def dry_run(config_path: Path, workdir: Path) -> tuple[str, float]:
    from vcrbench.plan.cluster import snakemake_command

    cmd = snakemake_command(REPO / "Snakefile", workdir, "-n", configfile=config_path)
    env = {**os.environ, "NO_ALBUMENTATIONS_UPDATE": "1"}
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"the dry run failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc.stdout + proc.stderr, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configfile", type=Path, default=REPO / "config" / "config.yaml")
    parser.add_argument(
        "--figures",
        type=Path,
        default=REPO / "benchmarks" / "figures",
        help="folder of outputs.json (bytes per prediction row, estimates' size)",
    )
    parser.add_argument(
        "--n-clean",
        type=int,
        default=None,
        help="clean-set images (default: as the workflow plans it from the config and its listing)",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="dry-run folder to keep (its config.yaml with the stand-ins, and dry-run.txt: "
        "Snakemake's output)",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the tables here")
    args = parser.parse_args()

    from vcrbench import plan
    from vcrbench.plan import cluster, cost, work
    from vcrbench.plan import config as pconfig

    config = yaml.safe_load(args.configfile.read_text()) or {}
    workdir = Path(tempfile.mkdtemp(prefix="vcr-plan-")) if args.keep is None else args.keep
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        config = absolute_paths(config)
        made = stand_ins(config, workdir)
        config_path = workdir / "config.yaml"
        config_path.write_text(yaml.safe_dump(config, sort_keys=False))
        output, seconds = dry_run(config_path, workdir)
        if args.keep is not None:
            (workdir / "dry-run.txt").write_text(output)
        jobs = cost.parse_job_stats(output)
        submissions = cost.parse_submissions(output, cluster.LOCAL_RULES)
        job_list = cost.parse_jobs(output)
        config = plan.load(config_path)
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)

    # the clean set's size as the workflow plans it (the same number sizes its ImageNet-C shards)
    n_clean = pconfig.clean_set_size(config) if args.n_clean is None else args.n_clean

    generation = work.figures("generation")
    gpu = work.figures("gpu_throughput")
    overhead = work.figures("job_overhead")
    outputs = json.loads((args.figures / "outputs.json").read_text())
    tables = cost.plan_cost(
        config,
        jobs,
        generation,
        gpu,
        n_clean,
        outputs["predictions"][
            "bytes_per_row_logprobs" if config["inference"]["save_logprobs"] else "bytes_per_row"
        ],
        outputs["estimates"],
        submissions,
        overhead["cpu_seconds"],
        job_list,
    )
    notes = [
        f"config: {args.configfile}; dry run planned {sum(jobs.values())} jobs in {seconds:.1f} s",
        f"generation figures: {generation['machine']}, {generation['date']}, one core per job, "
        f"load average {generation['load_average_before']} (benchmarks/bench_generation.py); "
        "ImageNet-C images are costed at their corruption's figure",
        f"GPU rates: {gpu['gpu']}, {gpu['source']}; a real job adds model loading and its data "
        "path (benchmarks/bench_loader.py), so these GPU-hours are a lower bound",
        *[
            f"alias {k}: {v}"
            for k, v in gpu.get("alias_notes", {}).items()
            if k in {work.architecture(e, {}) for e in plan.Plan(config).model_entries.values()}
        ],
        f"predictions: {outputs['predictions']['bytes_per_row']} bytes per row (measured, benchmarks/figures/outputs.json)",
        "requests: each job's first-attempt time limit is 2x the plan's estimate for it "
        "(vcrbench.plan.work; at least one minute, the scheduler's resolution), and a group "
        "job's is the sum of its members'",
        "submissions: what a cluster run submits with the workflow profile's groups "
        f"({sum(submissions['groups'].values())} group jobs, "
        f"{sum(submissions['jobs'].values())} jobs alone); "
        f"{sum(submissions['local'].values())} jobs of local rules run where Snakemake runs",
        "start-up per job (CPU seconds, measured by benchmarks/bench_job_overhead.py on "
        f"{overhead['machine']}, {overhead['date']}, load {overhead['load_average_before'][0]}): "
        + ", ".join(f"{k} {v} s" for k, v in overhead["cpu_seconds"].items())
        + "; a GPU node adds its CUDA context (not measured: no GPU here)",
        f"fine-tuning: samples x epochs at the base model's rate / {work.TRAINING_COST_FACTOR:g} "
        "(a training step costs about 3 forward passes: a rule of thumb, not measured)",
        "reads_gib: what each model's inference reads (clean set and every generated set), "
        "weights not counted",
        "not planned here: figures and human stages (minutes on a CPU, local rules)",
    ]
    if config["sampling"]["mode"] == "dv-uniform":
        notes.append(
            "sampling.mode dv-uniform: the manifest's pilot (corrupt + measure, then resample) "
            "is not counted in the core-hours"
        )
    if config["sampling"]["mode"] == "dv-stratified":
        notes.append(
            "sampling.mode dv-stratified: the manifest's candidates (each corrupted and measured; "
            "1 to sampling.options.max_candidates per sample, docs/corruptions.md) are not "
            "counted in the core-hours"
        )
    if made:
        notes.append("stand-ins for the dry run: " + "; ".join(made))
    print(cost.report(tables, notes), end="")
    if args.json is not None:
        doc = {k: json.loads(t.to_json(orient="records")) for k, t in tables.items()}
        args.json.write_text(json.dumps({**doc, "notes": notes}, indent=2) + "\n")


if __name__ == "__main__":
    main()
