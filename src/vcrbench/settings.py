"""Typed settings of the stages: a block of the validated config as one frozen value, built once
(by the plan layer from the config, or by a workflow job from its rule's params) and taken whole
by the stage's functions. Their defaults are the schema's (:func:`vcrbench.schema.default_of`),
written nowhere else; their values are checked against the schema's ``enum``.

:class:`VifSettings`: how Δv is measured (the ``vif`` block), taken by every stage that measures
Δv (:mod:`vcrbench.vif`, :mod:`vcrbench.testsets.measure`, the manifests' pilots, the test-set and
ImageNet-C shards). :class:`CoverageSettings`: Table 2's coverage (the ``coverage`` block), taken
by :mod:`vcrbench.testsets.coverage`. :class:`EstimationSettings`: Alg. 1's estimator (the
``estimation`` block's keys that :mod:`vcrbench.estimation` reads). :class:`TableSettings`: the
``figures`` keys that shape the tables (:mod:`vcrbench.tables`). :class:`HumanMappingSettings`: how
human conditions are placed on the Δv axis (the ``humans.mapping`` block). A leaf module: it imports
only the schema and the vocabulary, so that typing a setting costs a job no import
(:mod:`vcrbench.vif` loads numba).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

from vcrbench import schema
from vcrbench.vocab import HUMAN_LABEL_SPACE, IMAGENET1K

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
        VCR set (:func:`vcrbench.testsets.coverage.threshold`); ``coverage.min_count``.
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


#: ``estimation.anchor1``'s value that pins s(1) at chance level, 1/K of the label space's K
#: classes (:func:`chance_level`): what an observer that guesses scores once Δv = 1 (VIF = 0)
#: leaves no information.
ANCHOR1_CHANCE = "chance"
#: The classes of the label spaces whose chance level is known to the estimator.
CHANCE_CLASSES = {IMAGENET1K: 1000, HUMAN_LABEL_SPACE: 16}
#: How bootstrap replicates get their smoothing penalty (``estimation.bootstrap_penalty``).
BOOTSTRAP_PENALTIES = schema.enum_of("estimation.bootstrap_penalty")
#: Small-sample corrections of the bootstrap (``estimation.small_sample``).
SMALL_SAMPLE = schema.enum_of("estimation.small_sample")


def chance_level(label_space: str) -> float:
    """1/K, the accuracy of guessing among the K classes of ``label_space`` (ImageNet-1k: 1/1000,
    the 16 classes of the human experiments: 1/16); a ValueError for a label space whose K the
    estimator does not know (give ``estimation.anchor1`` a number there)."""
    if label_space not in CHANCE_CLASSES:
        raise ValueError(
            f"estimation.anchor1: chance is known for {sorted(CHANCE_CLASSES)}, not for label "
            f"space {label_space!r}; give anchor1 a number"
        )
    return 1.0 / CHANCE_CLASSES[label_space]


@dataclass(frozen=True)
class EstimationSettings:
    """The estimator's keys of the ``estimation`` block, typed (Alg. 1; docs/estimation.md), taken
    whole by :func:`vcrbench.estimation.estimate`, :func:`~vcrbench.estimation.fit_curve`,
    :func:`~vcrbench.estimation.bootstrap` and :func:`~vcrbench.estimation.bin_counts`. The
    block's other keys (``decision16``, ``similarity_*``, ``short_label_space``,
    ``label_spaces``) are read by the stages that use them. The seed is not a field: each
    estimate derives its own from the config's ``seed`` (:mod:`vcrbench.seeding`) and passes it.

    Attributes
    ----------
    bins
        M, the Δv bins; ``estimation.bins``.
    min_count
        L, the samples a bin needs for its rate to enter the fit; ``estimation.min_count``.
    n_boot
        Bootstrap replicates (0: none; bands and intervals are NaN); ``estimation.n_boot``.
    level
        Level of the pointwise band and of the R̂ interval, in (0, 1); ``estimation.level``.
    n_folds
        K of the cross-validation that picks the P-spline's penalty; ``estimation.n_folds``.
    lam
        A fixed smoothing penalty, or None: chosen (cross-validation, or SIC for the quantile
        spline); ``estimation.lam``.
    spline
        The fit, ``pspline`` or ``quantile``; ``estimation.spline``.
    small_sample
        ``t`` (replicates widened by :func:`vcrbench.estimation.bootstrap.small_sample_factor`) or
        ``none``; ``estimation.small_sample``.
    bootstrap_penalty
        ``reselect`` (each replicate re-chooses the penalty) or ``fixed``;
        ``estimation.bootstrap_penalty``.
    anchor1
        s(1): None (free), a number in [0, 1], or ``chance``, which a curve's estimate needs
        resolved first (:meth:`for_label_space`); ``estimation.anchor1``.
    empty_bins
        ``skip`` or ``zero``: what a bin under ``min_count`` is; ``estimation.empty_bins``.
    weighting
        Weighting of Δv in R̂ (None or ``uniform``, ``beta:A,B``; the library also takes a
        function or an array, :func:`vcrbench.estimation.weights_on_grid`, which checks it: an
        estimate does before any work); ``estimation.weighting``.
    grid_size
        Points of the evaluation grid over [0, 1]; ``estimation.grid_size``.
    """

    bins: int = schema.default_of("estimation.bins")
    min_count: int = schema.default_of("estimation.min_count")
    n_boot: int = schema.default_of("estimation.n_boot")
    level: float = schema.default_of("estimation.level")
    n_folds: int = schema.default_of("estimation.n_folds")
    lam: float | None = schema.default_of("estimation.lam")
    spline: str = schema.default_of("estimation.spline")
    small_sample: str = schema.default_of("estimation.small_sample")
    bootstrap_penalty: str = schema.default_of("estimation.bootstrap_penalty")
    anchor1: float | str | None = schema.default_of("estimation.anchor1")
    empty_bins: str = schema.default_of("estimation.empty_bins")
    weighting: object = schema.default_of("estimation.weighting")
    grid_size: int = schema.default_of("estimation.grid_size")

    def __post_init__(self):
        for key in ("spline", "small_sample", "bootstrap_penalty", "empty_bins"):
            choices = schema.enum_of(f"estimation.{key}")
            if getattr(self, key) not in choices:
                raise ValueError(
                    f"{key} must be one of {tuple(choices)}, got {getattr(self, key)!r}"
                )
        if self.bins < 2:
            raise ValueError(f"n_bins (number of bins) must be at least 2, got {self.bins}")
        if self.n_boot < 0:
            raise ValueError(f"n_boot must be >= 0, got {self.n_boot}")
        if not 0 < self.level < 1:
            raise ValueError(f"level must lie in (0, 1), got {self.level!r}")
        if self.anchor1 is not None and self.anchor1 != ANCHOR1_CHANCE:
            if isinstance(self.anchor1, str) or not 0.0 <= float(self.anchor1) <= 1.0:
                raise ValueError(
                    f"anchor1 must be None, a number in [0, 1] or {ANCHOR1_CHANCE!r}, got "
                    f"{self.anchor1!r}"
                )

    @classmethod
    def of_config(cls, estimation: Mapping) -> EstimationSettings:
        """From a validated config's ``estimation`` block (a key it leaves out: the schema's
        default; the block's keys that are no field are the other stages')."""
        return _of_block(cls, estimation)

    def for_label_space(self, label_space: str | None, anchor0=None) -> EstimationSettings:
        """These settings for one curve in ``label_space``: ``anchor1: chance`` becomes the chance
        level of the label space (:func:`chance_level`), or s(0) where that is lower (``anchor0``:
        s(0), or the clean outcomes it is the mean of): a non-increasing curve cannot end above
        its start. Other settings come back as they are; chance without a label space is an
        error."""
        if self.anchor1 != ANCHOR1_CHANCE:
            return self
        if label_space is None:
            raise ValueError(
                "estimation.anchor1: chance needs the label space of the curve (its 1/K)"
            )
        chance = chance_level(label_space)
        if anchor0 is not None:
            from numpy import mean

            chance = min(chance, float(mean(anchor0)))
        return replace(self, anchor1=chance)


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
    :func:`vcrbench.datasets.loading.load_dataset`,
    :func:`~vcrbench.datasets.loading.selected_images` and
    :func:`~vcrbench.datasets.loading.prepare_clean_set`. ``zero_shot`` is not a field: the
    zero-shot curves read it (:mod:`vcrbench.estimation.zeroshot`), not the clean set.

    Attributes
    ----------
    kind, path, labels, label_space
        The registered kind (:mod:`vcrbench.datasets.kinds`) and what it reads; ``label_space``:
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
