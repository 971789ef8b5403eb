"""Where the workflow reads Snakemake beyond its documented Snakefile surface: here only.

Snakemake has no public way for a workflow's ``onstart`` handler to see the jobs it has planned;
the checks made before any job starts (the dataset, the model entries, the label spaces) and the
start-up plan line need them. :func:`cores` reads ``workflow.cores`` (documented for rules'
``threads``) where it may be missing. :func:`planned_jobs` reads them from the workflow's DAG
(``workflow.dag.jobs``, ``workflow.dag.needrun_jobs()``: not documented) and hands on plain
:class:`PlannedJob` records, so no library layer sees a Snakemake object.

Snakemake's logger marks each record with its event (``LogEvent`` of the logger plugin interface,
public), but the fields a failed job's records carry (``rule_name``, ``rule_msg``, ``log``,
``exception``) are documented nowhere: :func:`failed_job` and :func:`rule_exception` read them
for :mod:`vcrbench.plan.console` and hand on plain values.

``tests/unit/test_snakemake_compat.py`` runs a real Snakemake on small Snakefiles through these
functions: an upgrade that changes what they read fails that test.
"""

from __future__ import annotations

import logging
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


@dataclass(frozen=True)
class FailedJob:
    """A job Snakemake's logger reports as failed (its ``JOB_ERROR`` event): the job's rule, its
    log files, and the message Snakemake shows for it: the rule's ``message:``, or Snakemake's own
    account where the job ran elsewhere (a cluster job: ``SLURM-job … failed``); None for a
    local job of a rule without ``message:``."""

    rule: str
    logs: tuple[str, ...]
    message: str | None


def failed_job(record: logging.LogRecord) -> FailedJob | None:
    """The failed job a record of Snakemake's logger reports, None for any other record."""
    from snakemake_interface_logger_plugins.common import LogEvent

    if getattr(record, "event", None) != LogEvent.JOB_ERROR:  # a StrEnum: equal to its value
        return None
    logs = tuple(str(x) for x in (getattr(record, "log", None) or []))
    return FailedJob(str(getattr(record, "rule_name", "")), logs, getattr(record, "rule_msg", None))


def rule_exception(record: logging.LogRecord) -> str | None:
    """The text of the error a record of Snakemake's logger reports for a failed rule (its
    ``ERROR`` event with a ``RuleException``: e.g. the ``CalledProcessError`` of a script's
    command), None for any other record."""
    from snakemake_interface_logger_plugins.common import LogEvent

    if getattr(record, "event", None) != LogEvent.ERROR:
        return None
    if getattr(record, "exception", None) != "RuleException":
        return None
    return str(record.msg)
