"""The registry of figures and tables: each declared once, with everything the workflow needs to
know about it (docs/architecture.md, "Add a figure or table").

A :class:`Product` is one rule of the figures stage: its outputs (path, report caption, category
and labels, formats), its stage version, whether it runs where Snakemake runs (``local``) and
which of its files a config asks for (``planned``). The rule file takes the rule's outputs from
here (``declared_files``/``declared_named`` in ``rules/common.smk``), :mod:`vcrbench.plan.versions` its version,
:mod:`vcrbench.plan.cluster` its locality and the archive mode, and ``rule all`` its files
(:func:`targets`). A product that also names its ``script``, ``inputs`` and ``params`` needs no rule
written: ``rules/figures.smk`` makes its rule from the declaration.

This module imports none of the built-in declarations (:mod:`.builtin`, imported by the
package).
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
    """A figure or table rule, declared once (module docstring)."""

    rule: str
    outputs: tuple[Output, ...]
    version: int = 1
    local: bool = True
    planned: Planned = once
    #: A rule made from the declaration (``rules/figures.smk``): its script (relative to
    #: ``rules/``, or absolute), and its inputs and params as functions of ``PLAN``.
    script: str | None = None
    inputs: Callable[[object], Mapping] | None = None
    params: Callable[[object], Mapping] | None = None

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
    if bool(product.script) != bool(product.inputs):
        raise PlanError(
            f"figure or table rule {product.rule!r}: a rule made from the declaration needs "
            "both its script and its inputs"
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


def generated() -> list[Product]:
    """The products whose rule is made from the declaration."""
    return [p for p in _PRODUCTS.values() if p.script]
