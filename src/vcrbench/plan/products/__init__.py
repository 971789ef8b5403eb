"""Figures and tables, each declared once: :mod:`.registry` (what a declaration holds, and the
registry), :mod:`.tables` and :mod:`.figures` (the workflow's own; ``rules/figures.smk`` makes
every declared product's rule). :func:`targets` lists the files of every declared product a
config asks for (what ``rule all`` and ``rule paper_figures`` build)."""

from __future__ import annotations

from collections.abc import Mapping

from vcrbench.figures.options import check_options
from vcrbench.plan.config import corruption_names
from vcrbench.plan.products import figures as _figures  # noqa: F401  (they register themselves,
from vcrbench.plan.products import tables as _tables  # noqa: F401  the tables first)
from vcrbench.plan.products.registry import (
    REPORT_FORMAT,
    Output,
    Product,
    declare,
    once,
    product,
    products,
)


def targets(config: Mapping) -> list[str]:
    """Every file of every declared figure and table that ``config`` asks for."""
    formats = check_options(config["figures"])["formats"]
    values = {"corruption": corruption_names(config)}
    return [f for p in products() for f in p.targets(config, formats, values)]


def local_rules() -> list[str]:
    """The declared rules that run where Snakemake runs."""
    return [p.rule for p in products() if p.local]


__all__ = [
    "REPORT_FORMAT",
    "Output",
    "Product",
    "declare",
    "local_rules",
    "once",
    "product",
    "products",
    "targets",
]
