"""The registry of figures and tables: each declared once, with everything the workflow needs to
know about it (docs/architecture.md, "Add a figure or table").

A :class:`Product` is one rule of the figures stage: its outputs (path, report caption, category
and labels, formats), its script, inputs and params, its stage version, whether it runs where
Snakemake runs (``local``) and which of its files a config asks for (``planned``).
``rules/figures.smk`` makes every declared product's rule from its declaration, the outputs with
``declared_files``/``declared_named`` (``rules/common.smk``); :mod:`vcrbench.plan.versions` takes
its version, :mod:`vcrbench.plan.cluster` its locality and the archive mode, and ``rule all`` its
files (:func:`targets`). No figure or table rule is written by hand.

This module imports none of the workflow's own declarations (:mod:`.tables`, :mod:`.figures`,
imported by the package).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from vcrbench.errors import PlanError, did_you_mean

#: The format of a figure shown in the report; the others of ``figures.formats`` go beside it.
REPORT_FORMAT = "png"


def _fill(template: str, **values: str) -> str:
    """``template`` with the named placeholders replaced, every other one kept (a rule's
    wildcards stay wildcards)."""
    for name, value in values.items():
        template = template.replace(f"{{{name}}}", str(value))
    return template


@dataclass(frozen=True)
class Output:
    """One output of a product (in one or several formats).

    ``path`` holds ``{ext}`` where the format goes (a path without it has one format);
    ``formats`` lists a table's formats, the first shown in the report; a figure (``formats``
    None) is shown as PNG and written in every other format of ``figures.formats`` too. ``each``
    (``"corruption"``) makes one file per corruption of the run in this one rule, the corruption
    in the path's ``{corruption}``; otherwise ``{corruption}`` in a path is the rule's wildcard.
    ``name`` makes it a named output of the rule (its other formats ``<name>_other``)."""

    path: str
    caption: str
    category: str
    labels: Mapping[str, str] = field(default_factory=dict)
    subcategory: str | None = None
    formats: tuple[str, ...] | None = None
    each: str | None = None
    name: str | None = None

    @property
    def figure(self) -> bool:
        return self.formats is None

    def _each(self, values: Mapping[str, list[str]]) -> list[dict[str, str]]:
        return [{self.each: v} for v in values[self.each]] if self.each else [{}]

    def shown(self, values: Mapping[str, list[str]]) -> list[tuple[str, str | None, dict]]:
        """``(file, subcategory, labels)`` of each file the report shows (``values``: the run's
        names, ``{"corruption": [...]}``, for ``each``)."""
        ext = REPORT_FORMAT if self.figure else self.formats[0]
        out = []
        for one in self._each(values):
            labels = {k: _fill(v, **one) for k, v in self.labels.items()}
            sub = None if self.subcategory is None else _fill(self.subcategory, **one)
            out.append((_fill(self.path, ext=ext, **one), sub, labels))
        return out

    def others(self, extra_formats: Iterable[str], values: Mapping[str, list[str]]) -> list[str]:
        """The files written beside those shown: a figure's ``extra_formats``, a table's other
        formats."""
        exts = list(extra_formats) if self.figure else list(self.formats[1:])
        return [_fill(self.path, ext=e, **one) for one in self._each(values) for e in exts]

    def files(self, formats: Iterable[str], wildcards: Mapping[str, str], values) -> list[str]:
        """The files a run asks for: in ``formats`` (a figure's: ``figures.formats``), the rule's
        ``wildcards`` filled in."""
        exts = list(formats) if self.figure else list(self.formats)
        return [
            _fill(self.path, ext=e, **one, **wildcards) for one in self._each(values) for e in exts
        ]


#: Which of a product's files a config asks for: one mapping of the rule's wildcards per job
#: (``[{}]``: the rule's one job; ``[]``: none).
Planned = Callable[[Mapping], list[dict[str, str]]]


def once(config: Mapping) -> list[dict[str, str]]:
    """Planned for every config."""
    return [{}]


@dataclass(frozen=True)
class Product:
    """A figure or table rule, declared once (module docstring).

    Its rule (``rules/figures.smk``) runs ``script`` (relative to ``rules/``, or absolute) on the
    named ``inputs`` with the named ``params``, both functions of ``PLAN`` (a value may be a
    function of the job's wildcards, as in any rule), its stage's ``version`` a param too; it
    writes ``outputs`` (the unnamed ones first, then the named), then ``other_outputs``: named
    files neither shown in the report nor asked for by ``rule all`` (``human_similarity``'s
    classes of similar corruptions, docs/humans.md)."""

    rule: str
    outputs: tuple[Output, ...]
    script: str | None = None
    inputs: Callable[[object], Mapping] | None = None
    params: Callable[[object], Mapping] | None = None
    other_outputs: Mapping[str, str] = field(default_factory=dict)
    version: int = 1
    local: bool = True
    planned: Planned = once

    def targets(self, config: Mapping, figure_formats: Iterable[str], values) -> list[str]:
        """The files of this product that ``config`` asks for."""
        formats = list(figure_formats)
        return [
            f
            for wildcards in self.planned(config)
            for out in self.outputs
            for f in out.files(formats, wildcards, values)
        ]


_PRODUCTS: dict[str, Product] = {}


def declare(product: Product) -> Product:
    """Register ``product`` (its rule's name must be new); returns it."""
    if product.rule in _PRODUCTS:
        raise PlanError(f"figure or table rule {product.rule!r} is declared twice")
    if not (product.script and product.inputs):
        raise PlanError(
            f"figure or table rule {product.rule!r}: its rule is made from its declaration, "
            "which needs both its script and its inputs"
        )
    named = [out.name is not None for out in product.outputs]
    if named != sorted(named):
        raise PlanError(
            f"figure or table rule {product.rule!r}: its named outputs come after the unnamed "
            "ones (the order of the rule's outputs)"
        )
    _PRODUCTS[product.rule] = product
    return product


def products() -> list[Product]:
    """Every declared product, in the order declared."""
    return list(_PRODUCTS.values())


def product(rule: str) -> Product:
    """The product of ``rule`` (an error naming it if none is declared)."""
    try:
        return _PRODUCTS[rule]
    except KeyError:
        raise PlanError(
            f"no figure or table rule {rule!r} is declared (vcrbench.plan.products)"
            + did_you_mean(rule, _PRODUCTS)
        ) from None
