"""What a workflow run submitted to the test cluster, and a core of its own for those jobs.

The test cluster announces more CPUs than this machine has (its GPU jobs ask for 8), so several
jobs at once would share the real cores and every allocation would look idle. To measure what an
allocation uses of what it holds, :func:`pin_jobs` puts slurmd (and with it every job step it
starts) on the last core, and the run's own processes (Snakemake, its local jobs) on the others;
with one cluster job at a time (the profile's ``jobs: 1``), a job then has a core to itself, as
on a real node.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

#: What a cluster job ran, by the rules its SLURM log names.
STAGES = {
    "generate": ("generate_shard", "generate_imagenet_c", "generate_retrain_shard"),
    "estimate": ("estimate_curves",),
    "infer": ("predict_clean", "predict_group", "predict_imagenet_c"),
}


def pin_jobs(cluster) -> set[int] | None:
    """Pin this cluster's slurmd to the last CPU; return the other CPUs (for the caller's own
    processes), or None where that is not possible (one CPU, or a cluster not started here)."""
    cpus = sorted(os.sched_getaffinity(0))
    slurmd = [p for p in cluster.started if Path(str(p.args[0])).name == "slurmd"]
    if len(cpus) < 2 or not slurmd:
        return None
    os.sched_setaffinity(slurmd[0].pid, {cpus[-1]})
    return set(cpus[:-1])


def submitted(out: str, workdir: Path) -> dict[str, list[str]]:
    """SLURM job ids of a run by stage (:data:`STAGES`, or the rule of a job submitted alone),
    from Snakemake's output (``SLURM jobid N (log: …)``) and each job's SLURM log."""
    found: dict[str, list[str]] = {}
    for job_id in re.findall(r"SLURM jobid (\d+)", out):
        logs = list((workdir / ".snakemake" / "slurm_logs").rglob(f"{job_id}.log"))
        text = "".join(p.read_text(errors="replace") for p in logs)
        rules = set(re.findall(r"^\s*(?:local)?rule (\w+):", text, re.M))
        stage = next((s for s, names in STAGES.items() if rules & set(names)), None)
        if stage is None:
            stage = "/".join(sorted(rules)) or "unknown"
        found.setdefault(stage, [])
        if job_id not in found[stage]:
            found[stage].append(job_id)
    return found
