"""Snakemake logger plugin ``vcrbench``: the workflow's console (``--logger vcrbench``;
profiles/default turns it on). What it shows is :mod:`vcrbench.plan.console`'s; this module is
the plugin interface's entry only.

Snakemake imports every ``snakemake_logger_plugin_*`` package it finds each time it starts, used
or not: this module imports nothing but the interface, and the library only once the plugin is
chosen.
"""

from __future__ import annotations

import sys

from snakemake_interface_logger_plugins.base import LogHandlerBase


class LogHandler(LogHandlerBase):
    """Writes Snakemake's records to its standard error (standard output in a dry run, as
    Snakemake's own console) in place of Snakemake's console handler. Snakemake attaches its own
    filter and formatter (``has_filter``, ``has_formatter`` false), so ``--quiet``,
    ``--printshellcmds`` and ``show-failed-logs`` shape the records as on its own console."""

    # The interface's properties, as class attributes.
    writes_to_stream = True  # in place of Snakemake's console handler
    writes_to_file = False
    has_filter = False  # Snakemake's DefaultFilter: --quiet, --printshellcmds
    has_formatter = False  # Snakemake's DefaultFormatter: its blocks, show-failed-logs
    needs_rulegraph = False

    def __post_init__(self) -> None:
        from vcrbench.plan.console import Console, colour_on

        stream = sys.stdout if self.common_settings.stdout else sys.stderr
        self.console = Console(stream, colour_on(stream, self.common_settings.nocolor))

    def handle(self, record):
        self.console.see(record)  # before Snakemake's filter: what --quiet hides too
        return super().handle(record)

    def emit(self, record) -> None:
        try:
            self.console.write(record, self.format)
        except Exception:
            self.handleError(record)
