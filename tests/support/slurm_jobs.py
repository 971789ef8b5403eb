"""What a workflow run submitted to the test cluster, and a core of its own for those jobs.

The test cluster announces more CPUs than this machine has (its GPU jobs ask for 8), so several
jobs at once would share the real cores and every allocation would look idle. To measure what an
allocation uses of what it holds, :func:`pin_jobs` puts slurmd (and with it every job step it
starts) on the last core, and the run's own processes (Snakemake, its local jobs) on the others;
with one cluster job at a time (the profile's ``jobs: 1``), a job then has a core to itself, as
on a real node.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
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


#: A job that computes for ``SECONDS`` and prints its own CPU and wall seconds.
BURN = """
import json, sys, time
start = time.time()
while time.time() - start < float(sys.argv[1]):
    sum(range(10000))
print(json.dumps({"cpu": time.process_time(), "wall": time.time() - start}))
"""


def sbatch(env: dict[str, str], folder: Path, *args: str) -> str:
    """Submit ``args`` with sbatch (output to ``folder``/<id>.out); the job's id."""
    proc = subprocess.run(
        ["sbatch", "--parsable", f"--output={folder}/%j.out", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"sbatch failed: {proc.stderr}")
    return proc.stdout.strip().split(";")[0]


def burn(env: dict[str, str], folder: Path, seconds: float = 8.0, *sbatch_args: str) -> str:
    """Submit a 1-CPU job that computes for ``seconds`` (:data:`BURN`); its id. Its output,
    ``folder``/<id>.out, is :func:`own_share`'s."""
    script = folder / "burn.py"
    script.write_text(BURN)
    return sbatch(
        env, folder, "-c", "1", *sbatch_args, "--wrap", f"{sys.executable} {script} {seconds}"
    )


def own_share(folder: Path, job_id: str) -> dict[str, float]:
    """A finished :func:`burn` job's own CPU and wall seconds, and their ratio ``share``: the CPU
    the machine gave a job that never waits (1 on an idle core)."""
    own = json.loads((folder / f"{job_id}.out").read_text())
    return {**own, "share": own["cpu"] / own["wall"]}
