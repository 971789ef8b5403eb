"""Typed settings of the stages: a block of the validated config as one frozen value, built once
(by the plan layer from the config, or by a workflow job from its rule's params) and taken whole
by the stage's functions. Their defaults are the schema's (:func:`vcrbench.schema.default_of`),
written nowhere else; their values are checked against the schema's ``enum``.

:class:`VifSettings`: how Δv is measured (the ``vif`` block), taken by every stage that measures
Δv (:mod:`vcrbench.vif`, :mod:`vcrbench.measure`, the manifests' pilots, the test-set and
ImageNet-C shards). :class:`CoverageSettings`: Table 2's coverage (the ``coverage`` block), taken
by :mod:`vcrbench.coverage`. :class:`TableSettings`: the ``figures`` keys that shape the tables
(:mod:`vcrbench.tables`). A leaf module: it imports only the schema, so that typing a setting
costs a job no import (:mod:`vcrbench.vif` loads numba).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from vcrbench import schema

#: Grey conversions before VIF: ``float`` (:func:`vcrbench.vif.luma`, this project's) and
#: ``uint8`` (:func:`vcrbench.vif.grey_uint8`, OpenCV's, which the VCR authors' generator uses).
GREY_CONVERSIONS = schema.enum_of("vif.grey")
#: The VIF implementations (:data:`vcrbench.vif.VARIANTS` has their constants).
VIF_VARIANTS = schema.enum_of("vif.variant")


def _of_block(cls, block: Mapping):
    """A settings class's value from a validated config block: each field the block gives, the
    schema's default (the field's) for each it leaves out."""
    return cls(**{f.name: block[f.name] for f in fields(cls) if f.name in block})


@dataclass(frozen=True)
class VifSettings:
    """The ``vif`` block of the config, typed.

    Attributes
    ----------
    variant
        ``kumar`` (the port the VCR paper used) or ``vifvec`` (Sheikh's MATLAB); ``vif.variant``.
    grey
        The grey conversion of both images before VIF, :data:`GREY_CONVERSIONS`; ``vif.grey``.
    """

    variant: str = schema.default_of("vif.variant")
    grey: str = schema.default_of("vif.grey")

    def __post_init__(self):
        if self.variant not in VIF_VARIANTS:
            raise ValueError(
                f"vif variant must be one of {list(VIF_VARIANTS)}, not {self.variant!r}"
            )
        if self.grey not in GREY_CONVERSIONS:
            raise ValueError(
                f"grey conversion must be one of {list(GREY_CONVERSIONS)}, not {self.grey!r}"
            )

    @classmethod
    def of_config(cls, vif: Mapping) -> VifSettings:
        """From a validated config's ``vif`` block (a key it leaves out: the schema's default)."""
        return _of_block(cls, vif)

    @classmethod
    def of_job(cls, params: Mapping) -> VifSettings:
        """From the params of a job that measures Δv (rules/generate.smk): ``vif_variant``, and
        each other field by its own name where the config gives it (``grey``;
        ``vcrbench.plan.config.measurement_params`` leaves out a key the config leaves out, so
        that those jobs' params and hashes stay as they were)."""
        given = {f.name: params[f.name] for f in fields(cls) if f.name in params}
        return cls.of_config({"variant": params["vif_variant"], **given})

    def metadata(self) -> dict:
        """What a set's metadata says of this measurement beside ``vif_variant``: each other field
        that is not the schema's default (``{"grey": "uint8"}``; ``{}`` for the defaults, so the
        default run's files stay as they were)."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name != "variant" and getattr(self, f.name) != f.default
        }


@dataclass(frozen=True)
class CoverageSettings:
    """The ``coverage`` block of the config, typed (Table 2; docs/corruptions.md).

    Attributes
    ----------
    bins
        Alg. 1's bins over Δv ∈ [0, 1]; ``coverage.bins``.
    min_count
        Images a bin needs to count as covered at ``reference_n`` VCR images, scaled to a run's
        VCR set (:func:`vcrbench.coverage.threshold`); ``coverage.min_count``.
    reference_n
        The VCR set size at which ``min_count`` holds as written; ``coverage.reference_n``.
    denominator
        Coverage = covered bins (of bins 0 .. denominator − 1) / denominator;
        ``coverage.denominator``.
    """

    bins: int = schema.default_of("coverage.bins")
    min_count: int = schema.default_of("coverage.min_count")
    reference_n: int = schema.default_of("coverage.reference_n")
    denominator: int = schema.default_of("coverage.denominator")

    def __post_init__(self):
        if not 1 <= self.denominator <= self.bins:
            raise ValueError(
                f"denominator must be in [1, n_bins={self.bins}], not {self.denominator}"
            )
        if self.min_count < 1 or self.reference_n < 1:
            raise ValueError(
                f"min_count and reference_n must be at least 1, not {self.min_count} and "
                f"{self.reference_n}"
            )

    @classmethod
    def of_config(cls, coverage: Mapping) -> CoverageSettings:
        """From a validated config's ``coverage`` block (or the ``coverage`` param of the rule
        ``coverage_table``, the same mapping); a key it leaves out: the schema's default."""
        return _of_block(cls, coverage)


#: What ranks a leaderboard (``figures.leaderboard_sort``).
LEADERBOARD_SORTS = schema.enum_of("figures.leaderboard_sort")


@dataclass(frozen=True)
class TableSettings:
    """The keys of the ``figures`` block that shape the tables (Tables 1–3, the metrics table, the
    leaderboards; docs/figures.md), typed. The figures' style is
    :class:`vcrbench.figures.style.Style` (it loads matplotlib; a table job needs none).

    Attributes
    ----------
    digits
        Decimals of the tables' numbers (their CSV data rounded, the Markdown and LaTeX cells);
        ``figures.digits``.
    label_space
        The label space of R̂ where a row has no human reference (``"dataset"``: the dataset's
        own, resolved against the run's by the table functions); ``figures.label_space``.
    leaderboard_sort
        The metric that ranks a leaderboard (R_a where a corruption has no values of it);
        ``figures.leaderboard_sort``.
    """

    digits: int = schema.default_of("figures.digits")
    label_space: str = schema.default_of("figures.label_space")
    leaderboard_sort: str = schema.default_of("figures.leaderboard_sort")

    def __post_init__(self):
        if isinstance(self.digits, bool) or not isinstance(self.digits, int):
            raise ValueError(f"digits must be an integer, not {self.digits!r}")
        if not 0 <= self.digits <= 10:
            raise ValueError(f"digits must be in [0, 10], not {self.digits}")
        if self.leaderboard_sort not in LEADERBOARD_SORTS:
            raise ValueError(
                f"leaderboard_sort must be one of {list(LEADERBOARD_SORTS)}, not "
                f"{self.leaderboard_sort!r}"
            )

    @classmethod
    def of_config(cls, figures: Mapping) -> TableSettings:
        """From a validated config's ``figures`` block (its other keys, the figures' style, are
        not the tables'); a key it leaves out: the schema's default."""
        return _of_block(cls, figures)
