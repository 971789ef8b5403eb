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

def pin_jobs(cluster) -> set[int] | None:
    """Pin this cluster's slurmd to the last CPU; return the other CPUs (for the caller's own
    processes), or None where that is not possible (one CPU, or a cluster not started here)."""
    cpus = sorted(os.sched_getaffinity(0))
    slurmd = [p for p in cluster.started if Path(str(p.args[0])).name == "slurmd"]
    if len(cpus) < 2 or not slurmd:
        return None
    os.sched_setaffinity(slurmd[0].pid, {cpus[-1]})
    return set(cpus[:-1])


def submitted(out: str) -> dict[str, list[str]]:
    """SLURM job ids of a run by group (``generate``, ``estimate``, ``infer-<model>``) or, for a
    job submitted alone, by rule, from Snakemake's output: ``SLURM jobid N (log: …)``, whose log
    folder is ``group_<group>_<its rules>`` or ``rule_<rule>`` (the executor deletes the logs of
    jobs that succeeded, so their folder names are all there is to read)."""
    found: dict[str, list[str]] = {}
    for job_id, log in re.findall(r"SLURM jobid (\d+) \(log: ([^)]*)\)", out):
        folder = next(p for p in Path(log).parts if p.startswith(("group_", "rule_")))
        kind, _, name = folder.partition("_")
        key = name.split("_", 1)[0] if kind == "group" else name
        if job_id not in found.setdefault(key, []):
            found[key].append(job_id)
    return found
