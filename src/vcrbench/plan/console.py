"""One clean error on the console for a failed job.

A job that fails says so itself, in one line (:mod:`vcrbench.plan.job`: ``vcrbench: job <rule>
(<wildcards>) failed: <the problem and what to do>``), its traceback in its log only. Snakemake
would then print its own account of the same failure: the ``CalledProcessError`` of the script's
command, and a block ``Error in rule …`` that reads ``message: None`` (a rule without a
``message:``) and, with ``show-failed-logs``, the job's log, so the same error text three times.

:func:`one_line_job_errors` adds a standard :class:`logging.Filter` to Snakemake's logger (the
supported way to shape what a logger emits; nothing of Snakemake is patched) that, for a job that
failed where it ran (a local job: its own line is on the console),

- replaces the ``Error in rule …`` block with one line naming the job's log
  (``vcrbench: log: <path>``), and
- drops the ``CalledProcessError`` of a script that exited with status 1 (what an uncaught Python
  exception gives; the job's line came before it). Any other exit (a kill, a signal, a crash of
  the interpreter) keeps Snakemake's message, since nothing else names it.

A job Snakemake reports with a message of its own (a cluster job: ``SLURM-job … failed``) keeps
Snakemake's block: there the job's line is in the cluster's log, not on the console.
"""

from __future__ import annotations

import logging

from vcrbench.plan.snakemake_compat import failed_job, rule_exception

#: The logger Snakemake logs through (``snakemake.logging.logger``).
SNAKEMAKE_LOGGER = "snakemake.logging"

#: What Snakemake's message of a script that exited with an uncaught Python exception holds.
_EXIT_1 = "returned non-zero exit status 1."


class OneLineJobErrors(logging.Filter):
    """See the module docstring. What a record says of a failed job is read by
    :mod:`vcrbench.plan.snakemake_compat` (the record's fields are not documented)."""

    def __init__(self, logger: logging.Logger):
        super().__init__()
        self.logger = logger

    def filter(self, record: logging.LogRecord) -> bool:
        job = failed_job(record)
        if job is not None and job.message is None:
            where = ", ".join(job.logs) if job.logs else "none (the job has no log)"
            self.logger.error(f"vcrbench: log of the failed job {job.rule}: {where}")
            return False
        text = rule_exception(record)
        if text is not None:
            return not ("CalledProcessError" in text and _EXIT_1 in text)
        return True


def one_line_job_errors(logger: logging.Logger | None = None) -> OneLineJobErrors:
    """Add :class:`OneLineJobErrors` to Snakemake's logger (once); returns it."""
    logger = logger or logging.getLogger(SNAKEMAKE_LOGGER)
    for existing in logger.filters:
        if isinstance(existing, OneLineJobErrors):
            return existing
    added = OneLineJobErrors(logger)
    logger.addFilter(added)
    return added
