"""The project's vocabulary: every fixed name, constant and column list, defined once.

A leaf module (it imports nothing): label spaces, the two properties a curve can describe, the
autocast precisions, Alg. 1's bins and the paper's coverage criterion, metric names, and the
columns of every table the workflow writes. Modules import these instead of spelling them again,
so that a name means one thing everywhere.
"""

from __future__ import annotations

# --------------------------------------------------------------------------- label spaces

#: The 1,000 ImageNet classes, the default label space of datasets and models.
IMAGENET1K = "imagenet1k"
#: The 16 entry-level classes of the human experiments (Geirhos et al. 2018); HMRI and MRSI
#: exist only here, since human data are 16-class forced choice.
HUMAN_LABEL_SPACE = "geirhos16"
#: What config calls the dataset's own label space (``estimation.label_spaces``, ``figures``).
DATASET_LABEL_SPACE = "dataset"
#: The label of an image without one (it counts for consistency only).
UNLABELLED = -1

# --------------------------------------------------------------------------- curves

#: The two properties of Alg. 1: key (the suffix of R_a, HMRI_p …) -> name.
PROPERTIES: dict[str, str] = {"a": "accuracy", "p": "consistency"}
#: Property names in their order (accuracy first).
PROPERTY_NAMES: tuple[str, ...] = tuple(PROPERTIES.values())
#: The paper's metrics, in the order tables show them.
METRICS = ("R_a", "R_p", "HMRI_a", "MRSI_a", "HMRI_p", "MRSI_p")
#: The zero-shot properties of a dataset with its own classes (vcrbench.zeroshot): key (the
#: suffix of R_cm …) -> name. Per-class mean accuracy; seen and unseen classes' per-class mean
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

# --------------------------------------------------------------------------- models

#: Autocast precisions of inference and training (``auto``: see vcrbench.runtime).
PRECISIONS = ("auto", "fp32", "bf16", "fp16")

# --------------------------------------------------------------------------- columns

#: Prefix of a corruption parameter's column in manifests, shards and trials.
PARAM_PREFIX = "param."
#: The domain set of the built-in corruptions when the config names none (config:
#: sampling.domain_set; vcrbench.corruptions.DOMAIN_SETS).
DEFAULT_DOMAIN_SET = "calibrated"


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
    "metric_range",
    "A_h_a",
    "A_h_p",
    "human_reference",
    "reference_how",
    "clean_accuracy",
    "n_samples",
    "n_images",
    "n_labelled",
]
