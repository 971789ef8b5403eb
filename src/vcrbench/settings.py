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


#: What a clean set does with an unreadable image (``dataset.on_error``, ``retrain.pool.on_error``).
ON_ERROR_VALUES = schema.enum_of("dataset.on_error")
#: The image sets of a dataset that ships a train/test split (``dataset.split``).
SPLITS = schema.enum_of("dataset.split")
#: Where every corruption is applied and Δv measured (``dataset.resolution``).
RESOLUTIONS = schema.enum_of("dataset.resolution")


@dataclass(frozen=True)
class DatasetSettings:
    """The ``dataset`` block of the config, typed: which images (``kind`` … ``limit``) and how they
    become the clean set (``resize`` … ``stored_max_side``), taken whole by
    :func:`vcrbench.datasets.load_dataset`, :func:`~vcrbench.datasets.selected_images` and
    :func:`~vcrbench.datasets.prepare_clean_set`. ``zero_shot`` is not a field: the zero-shot
    curves read it (:mod:`vcrbench.zeroshot`), not the clean set.

    Attributes
    ----------
    kind, path, labels, label_space
        The registered kind (:mod:`vcrbench.dataset_kinds`) and what it reads; ``label_space``:
        ``"imagenet1k"`` or the dataset's own classes (a mapping).
    include, exclude, limit
        Only these image ids (None: all); not these; the first ``limit`` of what is left.
    split
        ``all``, or a kind's shipped ``train`` / ``test`` images (:data:`SPLITS`).
    resize, crop
        The models' view: the shorter side resized to ``resize``, centre-cropped to ``crop``².
    exif_transpose
        Turn each image upright by its EXIF orientation tag first.
    on_error
        ``raise`` or ``skip`` an unreadable image (:data:`ON_ERROR_VALUES`).
    resolution, stored_max_side
        ``crop`` or ``stored`` (:data:`RESOLUTIONS`); with ``stored`` the clean set also keeps each
        image at its stored resolution, its longer side at most ``stored_max_side``.
    """

    kind: str = schema.default_of("dataset.kind")
    path: str | None = schema.default_of("dataset.path")
    labels: str | None = schema.default_of("dataset.labels")
    label_space: str | Mapping = schema.default_of("dataset.label_space")
    include: tuple[str, ...] | None = schema.default_of("dataset.include")
    exclude: tuple[str, ...] = tuple(schema.default_of("dataset.exclude"))
    limit: int | None = schema.default_of("dataset.limit")
    split: str = schema.default_of("dataset.split")
    resize: int = schema.default_of("dataset.resize")
    crop: int = schema.default_of("dataset.crop")
    exif_transpose: bool = schema.default_of("dataset.exif_transpose")
    on_error: str = schema.default_of("dataset.on_error")
    resolution: str = schema.default_of("dataset.resolution")
    stored_max_side: int = schema.default_of("dataset.stored_max_side")

    def __post_init__(self):
        for name, allowed in (
            ("on_error", ON_ERROR_VALUES), ("split", SPLITS), ("resolution", RESOLUTIONS)
        ):  # fmt: skip
            if getattr(self, name) not in allowed:
                raise ValueError(
                    f"dataset {name} must be one of {list(allowed)}, not {getattr(self, name)!r}"
                )
        if not 1 <= self.crop <= self.resize:
            raise ValueError(f"crop ({self.crop}) must be in [1, resize ({self.resize})]")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"limit must be at least 1 or None, not {self.limit}")
        # lists of ids as tuples: a frozen value compares equal whether a list or a tuple was given
        if self.include is not None:
            object.__setattr__(self, "include", tuple(self.include))
        object.__setattr__(self, "exclude", tuple(self.exclude))

    @classmethod
    def of_config(cls, dataset: Mapping) -> DatasetSettings:
        """From a validated config's ``dataset`` block (or the ``dataset`` param of the rule
        ``prepare_clean_set``, the same mapping); a key it leaves out (``resolution``,
        ``stored_max_side``): the schema's default."""
        return _of_block(cls, dataset)

    @property
    def stored(self) -> bool:
        """Whether the clean set keeps the stored images (``resolution: stored``)."""
        return self.resolution == "stored"

    @property
    def view(self) -> tuple[int, int]:
        """``(resize, crop)``: the models' view of an image."""
        return self.resize, self.crop
