"""Where the workflow reads Snakemake beyond its documented Snakefile surface: here only.

Snakemake has no public way for a workflow's ``onstart`` handler to see the jobs it has planned;
the checks made before any job starts (the dataset, the model entries, the label spaces) and the
start-up plan line need them. :func:`cores` reads ``workflow.cores`` (documented for rules'
``threads``) where it may be missing. :func:`planned_jobs` reads them from the workflow's DAG
(``workflow.dag.jobs``, ``workflow.dag.needrun_jobs()``: not documented) and hands on plain
:class:`PlannedJob` records, so no library layer sees a Snakemake object.

Why not the plan layer's own job list (issue 37 asked for it): the plan knows every job of the
config, finished or not, but which of them are to run is Snakemake's decision, made from its
own metadata under the workflow's rerun triggers (params, the set of inputs, mtimes, software
environment, incomplete markers). Checking every planned job instead would make a finished run,
or a fresh checkout with copied results, read a dataset and weights it no longer has; guessing
from the outputs' existence would skip the checks exactly when a changed setting reruns a job.
The logger plugin interface (public) documents per-rule job counts on its ``RUN_INFO`` event,
but Snakemake 9.27 sends no such field (its counts are in ``stats``, undocumented), with no
wildcards, and on the plugin's thread, after ``onstart`` may have begun.

The console reads no Snakemake internals: it is a logger plugin (:mod:`vcrbench.plan.console`),
Snakemake's public mechanism, and reads the record fields its interface documents.

``tests/unit/test_snakemake_compat.py`` runs a real Snakemake on small Snakefiles through these
functions: an upgrade that changes what they read fails that test.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PlannedJob:
    """One job of the planned DAG: its rule, its wildcards, and whether it is to run (Snakemake
    keeps the jobs of up-to-date outputs in the DAG too)."""

    rule: str
    wildcards: Mapping[str, str] = field(default_factory=dict)
    needrun: bool = True


def planned_jobs(workflow) -> list[PlannedJob]:
    """Every job of ``workflow``'s planned DAG (call it from ``onstart``), in the DAG's order."""
    dag = workflow.dag
    to_run = set(dag.needrun_jobs())
    return [PlannedJob(job.rule.name, dict(job.wildcards_dict), job in to_run) for job in dag.jobs]


def cores(workflow) -> int | None:
    """The cores a local run was given (``--cores``; ``workflow.cores`` is documented for rules'
    ``threads``); None where Snakemake has no such number, or an unbounded one (a cluster
    executor's)."""
    try:
        value = workflow.cores
    except Exception:  # Snakemake's WorkflowError: no number of cores was given
        return None
    return int(value) if value and int(value) < UNBOUNDED else None


#: A number of cores at or above which the run's cores are not a local machine's.
UNBOUNDED = 10_000


def to_run(jobs: list[PlannedJob]) -> list[PlannedJob]:
    """The jobs of ``jobs`` that are to run."""
    return [job for job in jobs if job.needrun]
