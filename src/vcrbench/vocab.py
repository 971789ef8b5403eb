"""The project's vocabulary: every fixed name, constant and column list, defined once.

A leaf module (it imports only :mod:`vcrbench.errors`): label spaces and which prediction columns
decide in each (:func:`decision_columns`), the two properties a curve can describe, the
autocast precisions, Alg. 1's bins and the paper's coverage criterion, metric names, and the
columns of every table the workflow writes. Modules import these instead of spelling them again,
so that a name means one thing everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable

from vcrbench.errors import LabelSpaceError

# --------------------------------------------------------------------------- label spaces

#: The 1,000 ImageNet classes, the default label space of datasets and models.
IMAGENET1K = "imagenet1k"
#: The 16 entry-level classes of the human experiments (Geirhos et al. 2018); HMRI and MRSI
#: exist only here, since human data are 16-class forced choice.
HUMAN_LABEL_SPACE = "geirhos16"
#: The 16 entry-level classes; a 16-class label is an index into this tuple.
GEIRHOS16_CLASSES: tuple[str, ...] = (
    "airplane",
    "bear",
    "bicycle",
    "bird",
    "boat",
    "bottle",
    "car",
    "cat",
    "chair",
    "clock",
    "dog",
    "elephant",
    "keyboard",
    "knife",
    "oven",
    "truck",
)
#: What config calls the dataset's own label space (``estimation.label_spaces``, ``figures``).
DATASET_LABEL_SPACE = "dataset"
#: The label of an image without one (it counts for consistency only).
UNLABELLED = -1
#: The prediction file's (decision, label) columns in the dataset's own label space …
DATASET_DECISION = ("pred", "label")
#: … and in the 16 human classes (-1: no 16-class decision or label).
HUMAN_DECISION = ("pred16", "label16")


def resolve_label_space(label_space: str, dataset_label_space: str) -> str:
    """The config's ``"dataset"`` means the dataset's own label space; other names are kept."""
    return dataset_label_space if label_space == DATASET_LABEL_SPACE else label_space


def resolve_label_spaces(label_spaces: Iterable[str], dataset_label_space: str) -> list[str]:
    """:func:`resolve_label_space` of each, in order, each name once."""
    return list(dict.fromkeys(resolve_label_space(s, dataset_label_space) for s in label_spaces))


def table_label_space(label_spaces: Iterable[str]) -> str:
    """The dataset's label space among the (resolved) label spaces of a table: the first that is
    not :data:`HUMAN_LABEL_SPACE`, else the first ("" for none)."""
    spaces = list(dict.fromkeys(label_spaces))
    return next((s for s in spaces if s != HUMAN_LABEL_SPACE), spaces[0] if spaces else "")


def decision_columns(label_space: str, dataset_label_space: str) -> tuple[str, str]:
    """The (decision, label) columns of a prediction file in ``label_space``: ``pred``/``label``
    in the dataset's own label space (``"dataset"`` or its name), ``pred16``/``label16`` in the
    16 human classes; :class:`~vcrbench.errors.LabelSpaceError` for any other."""
    space = resolve_label_space(label_space, dataset_label_space)
    if space == HUMAN_LABEL_SPACE:
        return HUMAN_DECISION
    if space == dataset_label_space:
        return DATASET_DECISION
    raise LabelSpaceError(
        f"label space {label_space!r} is neither the dataset's ({dataset_label_space!r}) "
        f"nor {HUMAN_LABEL_SPACE!r}"
    )


# --------------------------------------------------------------------------- curves

#: The two properties of Alg. 1: key (the suffix of R_a, HMRI_p …) -> name.
PROPERTIES: dict[str, str] = {"a": "accuracy", "p": "consistency"}
#: Property names in their order (accuracy first).
PROPERTY_NAMES: tuple[str, ...] = tuple(PROPERTIES.values())
#: The paper's metrics, in the order tables show them.
METRICS = ("R_a", "R_p", "HMRI_a", "MRSI_a", "HMRI_p", "MRSI_p")
#: The zero-shot properties of a dataset with its own classes (vcrbench.estimation.zeroshot): key
#: (the suffix of R_cm …) -> name. Per-class mean accuracy; seen and unseen classes' per-class mean
#: accuracy and their harmonic mean H exist where the dataset has a zero-shot split.
ZERO_SHOT_PROPERTIES: dict[str, str] = {
    "cm": "class_mean_accuracy",
    "s": "seen_accuracy",
    "u": "unseen_accuracy",
    "H": "harmonic_mean",
}
#: Columns the zero-shot properties add to the metrics table (after METRIC_COLUMNS).
ZERO_SHOT_METRIC_COLUMNS = [
    f"R_{key}{end}" for key in ZERO_SHOT_PROPERTIES for end in ("", "_lo", "_hi")
]

# --------------------------------------------------------------------------- bins and coverage

#: Alg. 1's visual-change resolution M: ``j = floor(v (M - 1))``; bin M - 1 holds only v = 1.
N_BINS = 40
#: Table 2: a bin is covered when it holds at least this many images …
COVERAGE_MIN_COUNT = 20
#: … in a set of this size (the ImageNet validation set).
COVERAGE_REFERENCE_N = 50_000
#: The paper's coverage values are k/39: bins 0..38 are counted.
COVERAGE_DENOMINATOR = 39
#: ImageNet-C corruptions whose VCR sets the authors' generator made with another function: the
#: paper's motion-blur sets are Albumentations 0.5's line kernel (``motion_blur_line``), its
#: glass-blur sets the toolbox's corner-only glass blur (``glass_blur_toolbox``). Table 2 pairs
#: each with its ImageNet-C sets; definitions.csv has a row for each.
PAIRED_VCR_SETS = {"motion_blur": "motion_blur_line", "glass_blur": "glass_blur_toolbox"}

# --------------------------------------------------------------------------- images

#: File suffixes read as images when a dataset folder or layout is listed (lower case).
IMAGE_SUFFIXES = frozenset(
    {".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp", ".ppm", ".pgm"}
)

# --------------------------------------------------------------------------- models

#: Autocast precisions of inference and training (``auto``: see vcrbench.runtime).
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
#: Keys of a model entry that describe the model for Table 1 (the paper's Architecture and
#: Training method columns) and change nothing a job computes: the table's job alone is given
#: them (``vcrbench.plan.config.model_settings`` leaves them out of every other job's params).
MODEL_DESCRIPTION_KEYS = ("architecture", "training")
#: Keys of a model entry that are the workflow's, not the model's: its jobs' ``resources`` and
#: what Table 1 says of it. The model sources never see them (``plan.config.model_settings``;
#: ``models.spec`` accepts and ignores them).
MODEL_WORKFLOW_KEYS = frozenset({"resources", *MODEL_DESCRIPTION_KEYS})

# --------------------------------------------------------------------------- columns

#: Prefix of a corruption parameter's column in manifests, shards and trials.
PARAM_PREFIX = "param."
#: The domain set of the built-in corruptions when the config names none (config:
#: sampling.domain_set; vcrbench.corruptions.DOMAIN_SETS).
DEFAULT_DOMAIN_SET = "calibrated"
#: How a corrupted image's float pixels become uint8 (``sampling.cast``, a corruption's ``cast``;
#: vcrbench.corruptions.values.cast_uint8): rounded (the default) or truncated (``np.uint8``).
CASTS = ("round", "truncate")
DEFAULT_CAST = "round"


def param_column(name: str) -> str:
    """The column of parameter ``name`` (``param.<name>``)."""
    return PARAM_PREFIX + name


def param_columns_of(frame) -> list[str]:
    """The parameter columns a table holds (``param.*``), sorted."""
    return sorted(c for c in frame.columns if c.startswith(PARAM_PREFIX))


def shard_id(index: int) -> str:
    """The zero-padded id of shard (or inference group) ``index``: ``00007``."""
    return f"{int(index):05d}"


#: Columns every test-set shard holds that inference reads (besides any parameters).
SHARD_COLUMNS = ("sample_id", "image_id", "label", "dv", "height", "width", "image")
#: The tables of one estimate folder (a human reference's; a model's has bins and curves).
ESTIMATE_TABLES = ("bins", "curves", "summary", "replicates")
#: Columns of Alg. 1's bins table.
BINS_COLUMNS = ["bin", "v_lo", "v_hi", "v_center", "v_mean", "count", "correct", "rate", "used"]

#: Columns of ``results/tables/coverage.csv``, in order.
COVERAGE_COLUMNS = [
    "corruption",
    "source",
    "n_images",
    "coverage",
    "covered_bins",
    "bins",
    "min_count",
    "denominator",
]
#: Columns of ``results/tables/dv_histograms.csv``.
DV_HISTOGRAM_COLUMNS = ["corruption", "source", "bin", "dv_low", "dv_high", "count", "fraction"]
#: Columns of ``results/tables/imagenet_c_accuracy.csv``.
IMAGENET_C_COLUMNS = [
    "model",
    "corruption",
    "label_space",
    "severity",
    "accuracy",
    "consistency",
    "n",
    "n_images",
]
#: The first columns of a prediction file, what evaluation reads (the rest of the prediction
#: schema, top-5, 16-class probabilities, entropy, log-probabilities: vcrbench.inference.outputs).
PREDICTION_COLUMNS = (
    "sample_id",
    "image_id",
    "label",
    "dv",
    "pred",
    "prob_label",
    "pred16",
    "label16",
)
#: Columns of ``metrics.parquet`` and ``results/tables/vcr_metrics.csv``, in order.
#: ``status`` of a metrics row all of whose properties were estimated, and of one with a
#: property whose samples fill no Δv bin to estimation.min_count (vcrbench.evaluation.evaluate).
STATUS_OK, STATUS_SHORT = "ok", "too few samples"
METRIC_COLUMNS = [
    "model",
    "corruption",
    "label_space",
    "R_a",
    "R_a_lo",
    "R_a_hi",
    "R_p",
    "R_p_lo",
    "R_p_hi",
    "HMRI_a",
    "HMRI_a_lo",
    "HMRI_a_hi",
    "MRSI_a",
    "MRSI_a_lo",
    "MRSI_a_hi",
    "scenario_a",
    "scenario_a_share",
    "human_dv_lo_a",
    "human_dv_hi_a",
    "HMRI_a_support",
    "HMRI_a_support_lo",
    "HMRI_a_support_hi",
    "MRSI_a_support",
    "MRSI_a_support_lo",
    "MRSI_a_support_hi",
    "HMRI_p",
    "HMRI_p_lo",
    "HMRI_p_hi",
    "MRSI_p",
    "MRSI_p_lo",
    "MRSI_p_hi",
    "scenario_p",
    "scenario_p_share",
    "human_dv_lo_p",
    "human_dv_hi_p",
    "HMRI_p_support",
    "HMRI_p_support_lo",
    "HMRI_p_support_hi",
    "MRSI_p_support",
    "MRSI_p_support_lo",
    "MRSI_p_support_hi",
    "A_h_a",
    "A_h_p",
    "human_reference",
    "reference_how",
    "clean_accuracy",
    "n_samples",
    "n_images",
    "n_labelled",
    # "ok", or "too few samples" with the property and the counts (vcrbench.evaluation.evaluate)
    "status",
    "status_reason",
]

# --------------------------------------------------------------------------- more tables

#: Columns of ``results/tables/model_error_consistency.csv`` (vcrbench.evaluation.consistency).
MODEL_CONSISTENCY_COLUMNS = (
    "corruption", "label_space", "model_a", "model_b", "bin", "v_lo", "v_hi", "n", "p_a", "p_b",
    "c_obs", "c_exp", "kappa",
)  # fmt: skip
#: Columns of ``results/tables/defenses.csv`` (vcrbench.evaluation.defense_effects).
DEFENSE_COLUMNS = [
    "model",
    "undefended",
    "defense",
    "corruption",
    "label_space",
    "n_samples",
    "n_images",
    "clean_accuracy_undefended",
    "clean_accuracy_defended",
    "clean_relative_change",
    "accuracy_undefended",
    "accuracy_defended",
    "relative_change",
    "relative_change_lo",
    "relative_change_hi",
    "R_a_undefended",
    "R_a_defended",
    "delta_R_a",
    "delta_R_a_lo",
    "delta_R_a_hi",
    "p_R_a",
    "R_p_undefended",
    "R_p_defended",
    "delta_R_p",
    "delta_R_p_lo",
    "delta_R_p_hi",
    "p_R_p",
    "n_boot",
    "level",
]
#: Columns of :func:`vcrbench.evaluation.differences.differences` -> their columns in
#: ``defenses.csv`` (per metric).
DEFENSE_DELTA_COLUMNS = {
    "value_b": "{metric}_undefended",
    "value_a": "{metric}_defended",
    "diff": "delta_{metric}",
    "diff_lo": "delta_{metric}_lo",
    "diff_hi": "delta_{metric}_hi",
    "p_value": "p_{metric}",
}
#: One row per replicate of one estimate, written by ``evaluate`` (``replicate_metrics.parquet``).
REPLICATE_COLUMNS = [
    "model",
    "corruption",
    "label_space",
    "metric",
    "replicate",
    "value",
    "point",
    "n",
    "n_units",
    "seed",
    "level",
]
#: Columns of ``results/tables/model_differences.csv``.
DIFFERENCE_COLUMNS = [
    "model_a",
    "model_b",
    "relation",
    "corruption",
    "label_space",
    "metric",
    "value_a",
    "value_b",
    "diff",
    "diff_lo",
    "diff_hi",
    "p_value",
    "p_holm",
    "indistinguishable",
    "n_units",
    "n_boot",
]
#: Columns of ``results/tables/human_similarity.csv``.
SIMILARITY_COLUMNS = [
    "property",
    "reference_a",
    "reference_b",
    "corruption_a",
    "corruption_b",
    "class_a",
    "class_b",
    "similar",
    "overlap_fraction",
    "max_gap",
    "first_gap_v",
    "level",
    "band",
]
#: Columns of ``results/tables/zero_shot_classes.csv``.
ZERO_SHOT_CLASS_COLUMNS = [
    "model", "corruption", "class", "class_name", "group", "bin", "v_lo", "v_hi", "n", "correct",
    "accuracy", "clean_n", "clean_accuracy",
]  # fmt: skip
#: Columns of ``results/tables/zero_shot_transitions.csv``.
ZERO_SHOT_TRANSITION_COLUMNS = [
    "model", "corruption", "group", "bin", "v_lo", "v_hi", "n", "n_clean_correct",
    "n_clean_false", "CF", "FC", "FF", "n_changed", "to_seen", "to_unseen",
]  # fmt: skip
#: The image columns of a shard (raw uint8 pixels and their shape; vcrbench.files.io.image_column).
IMAGE_COLUMNS = ["image", "height", "width"]

# --------------------------------------------------------------------------- corruption categories

#: ImageNet-C's four corruption categories (Hendrycks & Dietterich 2019), and what a corruption
#: outside them is reported under.
CORRUPTION_CATEGORIES = ("noise", "blur", "weather", "digital")
OTHER_CATEGORY = "other"
#: The 15 corruptions of ImageNet-C's benchmark, in its order, with the category ImageNet-C gives
#: each (brightness is weather, contrast digital): mCE is the mean CE over them, and the mCE
#: table's category rows name the members a run lacks. A registered corruption's own category is
#: set where it is registered (``register_corruption(..., category=...)``).
IMAGENET_C_BENCHMARK_CATEGORY: dict[str, str] = {
    "gaussian_noise": "noise", "shot_noise": "noise", "impulse_noise": "noise",
    "defocus_blur": "blur", "glass_blur": "blur", "motion_blur": "blur", "zoom_blur": "blur",
    "snow": "weather", "frost": "weather", "fog": "weather", "brightness": "weather",
    "contrast": "digital", "elastic_transform": "digital", "pixelate": "digital",
    "jpeg_compression": "digital",
}  # fmt: skip
IMAGENET_C_BENCHMARK = tuple(IMAGENET_C_BENCHMARK_CATEGORY)
#: Columns of ``results/tables/imagenet_c_mce.csv``.
IMAGENET_C_MCE_COLUMNS = [
    "model", "row", "corruption", "category", "n_corruptions", "missing", "error",
    "clean_error", "alexnet_error", "alexnet_clean_error", "CE", "relative_CE",
]  # fmt: skip
#: Columns of the restricted-analysis tables (``results/tables/clean_correct.csv``,
#: ``zero_shot_unseen_only.csv``; vcrbench.tables.restricted) and of their curves.
RESTRICTED_COLUMNS = [
    "model", "corruption", "label_space", "property", "n_samples", "n_images", "clean_accuracy",
    "R", "R_lo", "R_hi",
]  # fmt: skip
RESTRICTED_CURVE_COLUMNS = [
    "model", "corruption", "label_space", "property", "v", "value", "lo", "hi",
]  # fmt: skip
#: Columns of ``results/tables/corruption_categories.csv``.
CATEGORY_COLUMNS = [
    "source", "model", "label_space", "category", "metric", "value", "n_corruptions",
    "corruptions",
]  # fmt: skip
