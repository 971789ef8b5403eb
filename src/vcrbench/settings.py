"""Typed settings of the stages: a block of the validated config as one frozen value, built once
(by the plan layer from the config, or by a workflow job from its rule's params) and taken whole
by the stage's functions. Their defaults are the schema's (:func:`vcrbench.schema.default_of`),
written nowhere else; their values are checked against the schema's ``enum``.

:class:`VifSettings`: how Δv is measured (the ``vif`` block), taken by every stage that measures
Δv (:mod:`vcrbench.vif`, :mod:`vcrbench.measure`, the manifests' pilots, the test-set and
ImageNet-C shards). :class:`CoverageSettings`: Table 2's coverage (the ``coverage`` block), taken
by :mod:`vcrbench.coverage`. A leaf module: it imports only the schema, so that typing a setting
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


#: Reference images of a human condition's Δv: the clean colour image, or the experiment's
#: least-manipulated stimulus (:mod:`vcrbench.humans.mapping`).
HUMAN_MAPPING_REFERENCES = schema.enum_of("humans.mapping.reference")


@dataclass(frozen=True)
class HumanMappingSettings:
    """The ``humans.mapping`` block of the config, typed: how the fixed conditions of a human
    reference are placed on the Δv axis (docs/humans.md), taken by
    :func:`vcrbench.humans.mapping.condition_dv` and :func:`vcrbench.humans.stages.map_conditions`.
    A reference's own ``mapping`` entry overrides keys of the block
    (:func:`vcrbench.plan.humans.mapping_options` merges them; this is the merged value).

    Attributes
    ----------
    reference
        Reference image of Δv, :data:`HUMAN_MAPPING_REFERENCES`; ``humans.mapping.reference``.
    n_images
        Clean-set images the conditions are measured on (a seeded choice; None: all);
        ``humans.mapping.n_images``.
    draws
        Manipulations per image and condition (independent noise); ``humans.mapping.draws``.
    lowpass_sigma_scale
        Low-pass σ in the clean set's pixels per σ of Geirhos' 224-px grid;
        ``humans.mapping.lowpass_sigma_scale``.
    jpeg_quality
        Measure Δv on JPEG-compressed stimuli of this quality (None: lossless);
        ``humans.mapping.jpeg_quality``.
    """

    reference: str = schema.default_of("humans.mapping.reference")
    n_images: int | None = schema.default_of("humans.mapping.n_images")
    draws: int = schema.default_of("humans.mapping.draws")
    lowpass_sigma_scale: float = schema.default_of("humans.mapping.lowpass_sigma_scale")
    jpeg_quality: int | None = schema.default_of("humans.mapping.jpeg_quality")

    def __post_init__(self):
        if self.reference not in HUMAN_MAPPING_REFERENCES:
            raise ValueError(
                f"reference must be one of {HUMAN_MAPPING_REFERENCES}, not {self.reference!r}"
            )
        if self.draws < 1:
            raise ValueError(f"draws must be at least 1, got {self.draws}")
        if self.n_images is not None and self.n_images < 1:
            raise ValueError(f"n_images must be at least 1, got {self.n_images}")
        if not self.lowpass_sigma_scale > 0:
            raise ValueError(
                f"lowpass_sigma_scale must be positive, got {self.lowpass_sigma_scale}"
            )
        if self.jpeg_quality is not None and not 1 <= self.jpeg_quality <= 100:
            raise ValueError(f"jpeg_quality must be in [1, 100], got {self.jpeg_quality}")

    @classmethod
    def of_config(cls, mapping: Mapping) -> HumanMappingSettings:
        """From a validated config's ``humans.mapping`` block, or a reference's merged mapping
        options (the ``mapping`` param of the rule ``map_human_conditions``); a key it leaves
        out: the schema's default."""
        return _of_block(cls, mapping)
