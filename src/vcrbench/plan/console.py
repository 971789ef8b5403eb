"""One clean error on the console for a failed job.

A job that fails says so itself, in one line (:mod:`vcrbench.plan.job`: ``vcrbench: job <rule>
(<wildcards>) failed: <the problem and what to do>``), its traceback in its log only. Snakemake
would then print its own account of the same failure: the ``CalledProcessError`` of the script's
command, and a block ``Error in rule …`` that reads ``message: None`` and, with
``show-failed-logs``, the job's log, so the same error text three times.

The workflow's console is therefore written by a Snakemake logger plugin, ``vcrbench`` (the
package ``snakemake_logger_plugin_vcrbench``, shipped beside this library; profiles/default turns
it on with ``logger: [vcrbench]``), Snakemake's public way to shape what it prints. It replaces
Snakemake's console handler: Snakemake's own filter and formatter shape every record as before
(``--quiet``, ``--printshellcmds``, ``show-failed-logs``), and :class:`Console` writes what they
give, except that for a job that failed where this process ran it (its own line is on the
console)

- the ``Error in rule …`` block becomes one line naming the job's log
  (``vcrbench: log of the failed job <rule>: <path>``), and
- the ``CalledProcessError`` of a script that exited with status 1 is dropped (what an uncaught
  Python exception gives; the job's line came before it). Any other exit (a kill, a signal, a
  crash of the interpreter) keeps Snakemake's message, since nothing else names it.

Snakemake's block stays for a job of a rule with a ``message:`` of its own (none of the
workflow's rules has one: such a rule may print no line of its own) and for a job that ran
elsewhere (a cluster job: its line is in the cluster's log, and Snakemake's block names that log
and the cluster's status). Snakemake's log file (``.snakemake/log/``) keeps its whole account.

Only the record fields the logger plugin interface documents are read: ``JOB_INFO``'s ``jobid``,
``rule_name``, ``log`` and ``rule_msg`` (the rule's ``message:``), ``JOB_ERROR``'s ``jobid``,
``ERROR``'s ``exception``, ``RESOURCES_INFO``'s ``nodes`` (given when the run submits its jobs to
a cluster), and the message of the record. Which of a cluster run's rules run where Snakemake runs
is the workflow's own list (:data:`vcrbench.plan.cluster.LOCAL_RULES`). tests/unit/test_console.py
runs a real Snakemake with the plugin, locally and with the SLURM executor on stand-in commands:
an upgrade that stops giving these fails there.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TextIO

from snakemake_interface_logger_plugins.common import LogEvent

#: What Snakemake's message of a script that exited with an uncaught Python exception holds.
_EXIT_1 = "returned non-zero exit status 1."

#: ANSI colours by level, as Snakemake's console has them; Snakemake's plain notes (no event,
#: its run's summary, a shell command, the jobs it starts) are yellow.
_COLOURS = {"CRITICAL": 35, "ERROR": 31, "WARNING": 33, "INFO": 32, "DEBUG": 34}
_NOTES = (None, LogEvent.RUN_INFO, LogEvent.SHELLCMD, LogEvent.JOB_STARTED)


@dataclass(frozen=True)
class Job:
    """What a job's ``JOB_INFO`` record says of it: its rule, its log files, and its rule's
    ``message:`` (None for a rule without one)."""

    rule: str
    logs: tuple[str, ...]
    message: str | None


def _local_rules() -> Collection[str]:
    from vcrbench.plan.cluster import local_rules

    return local_rules()


class Console:
    """Writes Snakemake's records to ``stream`` as the module docstring says. The logger
    plugin shows it every record before Snakemake's filter (:meth:`see`) and hands it those
    that pass the filter (:meth:`write`) with Snakemake's formatter."""

    def __init__(
        self,
        stream: TextIO,
        colour: bool = False,
        local_rules: Callable[[], Collection[str]] = _local_rules,
    ):
        self.stream = stream
        self.colour = colour
        self.local_rules = local_rules
        self.jobs: dict[object, Job] = {}
        self.remote = False  # the run submits its jobs to a cluster
        self._after_job_info = False

    def see(self, record: logging.LogRecord) -> None:
        """Remember what ``record`` says of a job or of the run, whether or not it is shown
        (``--quiet progress`` hides the record that says the run submits to a cluster)."""
        event = getattr(record, "event", None)
        if event == LogEvent.JOB_INFO:
            logs = tuple(str(x) for x in (getattr(record, "log", None) or ()))
            rule = str(getattr(record, "rule_name", ""))
            self.jobs[getattr(record, "jobid", None)] = Job(
                rule, logs, getattr(record, "rule_msg", None) or None
            )
        elif event == LogEvent.RESOURCES_INFO and getattr(record, "nodes", None) is not None:
            self.remote = True

    def ran_here(self, job: Job) -> bool:
        """Whether ``job`` ran in this process (its own line is on this console)."""
        return not self.remote or job.rule in self.local_rules()

    def text(self, record: logging.LogRecord, fmt: Callable[[logging.LogRecord], str]) -> str:
        """What the console shows of ``record`` (``fmt``: Snakemake's formatter); empty for
        nothing."""
        event = getattr(record, "event", None)
        if event == LogEvent.JOB_ERROR:
            job = self.jobs.get(getattr(record, "jobid", None))
            if job is not None and job.message is None and self.ran_here(job):
                where = ", ".join(job.logs) if job.logs else "none (the job has no log)"
                return f"vcrbench: log of the failed job {job.rule}: {where}"
        elif event == LogEvent.ERROR and getattr(record, "exception", None) == "RuleException":
            said = record.getMessage()
            if "CalledProcessError" in said and _EXIT_1 in said:
                return ""
        text = fmt(record)
        return "" if text is None or text == "None" else text

    def write(self, record: logging.LogRecord, fmt: Callable[[logging.LogRecord], str]) -> None:
        """Write what the console shows of ``record``: a blank line before a job's block (not
        between the blocks of a group's jobs), coloured by level where colour is on."""
        event = getattr(record, "event", None)
        if event == LogEvent.JOB_INFO and not self._after_job_info:
            self.stream.write("\n")
        self._after_job_info = event == LogEvent.JOB_INFO
        text = self.text(record, fmt)
        if not text:
            return
        if self.colour and record.levelname in _COLOURS:
            notes = record.levelno == logging.INFO and event in _NOTES
            code = _COLOURS["WARNING" if notes else record.levelname]
            text = f"\033[{code}m{text}\033[0m"
        self.stream.write(text + "\n")
        self.stream.flush()


def colour_on(stream: TextIO, nocolor: bool) -> bool:
    """Colour for a terminal that shows it, unless ``--nocolor``."""
    isatty = getattr(stream, "isatty", None)
    return not nocolor and bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"
