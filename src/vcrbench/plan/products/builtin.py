"""The workflow's own figures and tables (docs/figures.md), declared once each
(:mod:`.registry`); their rules are in ``rules/figures.smk``.

``planned`` says which of a product's files a config asks for: every corruption's, those with a
human reference or an ImageNet-C set, or the rule's one job when the run has what it shows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from vcrbench.plan import paths
from vcrbench.plan.config import (
    corruption_names,
    dataset_label_space_name,
    imagenet_c_corruptions,
    model_entries,
)
from vcrbench.plan.humans import geirhos_references, human_references, references_in_use
from vcrbench.plan.models import defense_pairs
from vcrbench.plan.products.registry import Output, Product, declare, once
from vcrbench.plan.retrain import retrained_pairs
from vcrbench.vocab import IMAGENET1K

#: The paper's tables: CSV in the report, Markdown and LaTeX beside it.
TABLE_FORMATS = ("csv", "md", "tex")
CSV = ("csv",)


def _per(corruptions: Callable[[Mapping], list[str]]):
    def planned(config: Mapping) -> list[dict[str, str]]:
        return [{"corruption": c} for c in corruptions(config)]

    return planned


def _when(condition: Callable[[Mapping], object]):
    def planned(config: Mapping) -> list[dict[str, str]]:
        return [{}] if condition(config) else []

    return planned


def _with_humans(config: Mapping) -> list[str]:
    return [c for c, (ref, _) in human_references(config).items() if ref]


def _mce(config: Mapping) -> bool:
    return bool(imagenet_c_corruptions(config)) and dataset_label_space_name(config) == IMAGENET1K


def _trained_table(config: Mapping) -> bool:
    return bool(geirhos_references(config)) and bool(config["humans"]["trained_table"])


def _paper_table(name: str) -> str:
    return f"{paths.PAPER_TABLES}/{name}.{{ext}}"


def _paper(name: str, caption: str, label: str, output=None, category="Tables") -> Output:
    """A table of the paper (``results/tables/paper/<name>``, CSV, Markdown and LaTeX)."""
    labels = {"table": label}
    return Output(_paper_table(name), caption, category, labels, formats=TABLE_FORMATS, name=output)


def _per_corruption_figure(
    rule: str, kind: str, caption: str, category: str, label: str, which, version: int = 1
):
    """A figure per corruption (``results/figures/<kind>/{corruption}.<ext>``)."""
    return declare(
        Product(
            rule,
            (
                Output(
                    paths.FIGURE.replace("{kind}", kind),
                    caption,
                    category,
                    labels={"corruption": "{corruption}", "figure": label},
                    subcategory="{corruption}",
                ),
            ),
            version=version,
            planned=_per(which),
        )
    )


def _csv_table(rule: str, path: str, caption: str, label: str, planned=once):
    return declare(
        Product(
            rule,
            (Output(path, caption, "Tables", labels={"table": label}, formats=CSV),),
            planned=planned,
        )
    )


# --------------------------------------------------------------------------- tables

_csv_table(
    "imagenet_c_accuracy",
    paths.IMAGENET_C_ACCURACY,
    "imagenet_c_accuracy.rst",
    "ImageNet-C accuracy",
    _when(imagenet_c_corruptions),
)
_csv_table(
    "imagenet_c_clean_correct",
    paths.IMAGENET_C_CLEAN_CORRECT,
    "imagenet_c_clean_correct.rst",
    "ImageNet-C on clean-correct images",
    _when(imagenet_c_corruptions),
)
_csv_table(
    "imagenet_c_mce", paths.IMAGENET_C_MCE, "imagenet_c_mce.rst", "ImageNet-C mCE", _when(_mce)
)
_csv_table(
    "corruption_categories",
    paths.CORRUPTION_CATEGORIES,
    "corruption_categories.rst",
    "by corruption category",
)
declare(
    Product(
        "paper_tables",
        (
            _paper("table2_coverage", "table2_coverage.rst", "Table 2: Δv coverage", "coverage"),
            _paper("metrics", "metrics_intervals.rst", "metrics with intervals", "metrics"),
            Output(
                _paper_table("leaderboard/{corruption}"),
                "leaderboard.rst",
                "Leaderboards",
                labels={"corruption": "{corruption}", "table": "leaderboard"},
                subcategory="{corruption}",
                formats=TABLE_FORMATS,
                each="corruption",
                name="leaderboards",
            ),
        ),
    )
)
declare(
    Product(
        "models_table",
        (_paper("table1_models", "table1_models.rst", "Table 1: models"),),
        version=2,  # 2: the paper's columns architecture and training
    )
)
declare(
    Product(
        "retraining_table",
        (
            _paper(
                "table3_retraining",
                "table3_retraining.rst",
                "Table 3: before and after retraining",
                category="Retraining",
            ),
        ),
        planned=_when(retrained_pairs),
    )
)
declare(
    Product(
        "human_similarity",
        (
            Output(
                paths.HUMAN_SIMILARITY,
                "human_similarity_table.rst",
                "Humans",
                labels={"table": "pairwise similarity tests"},
                subcategory="Similarity of corruptions",
                formats=CSV,
            ),
        ),
        planned=_when(references_in_use),
    )
)

# --------------------------------------------------------------------------- figures

_per_corruption_figure(
    "plot_curves", "curves", "curves.rst", "Models vs humans", "curves s_a, s_p", corruption_names
)
_per_corruption_figure(
    "plot_hmri_mrsi",
    "hmri_mrsi",
    "hmri_mrsi.rst",
    "Models vs humans",
    "HMRI and MRSI",
    _with_humans,
)
_per_corruption_figure(
    "plot_dv_histograms",
    "dv_histograms",
    "dv_histograms.rst",
    "Test sets",
    "Δv histograms",
    corruption_names,
)
_per_corruption_figure(
    "plot_examples",
    "examples",
    "examples.rst",
    "Test sets",
    "examples at increasing Δv",
    corruption_names,
    version=2,  # 2: up to the highest Δv of the shards (was: bin 35's centre, about .91)
)
_per_corruption_figure(
    "plot_imagenet_c_vs_vcr",
    "imagenet_c_vs_vcr",
    "imagenet_c_vs_vcr.rst",
    "ImageNet-C vs VCR",
    "ImageNet-C accuracy vs R̂",
    imagenet_c_corruptions,
)


def _figure(rule: str, path: str, caption: str, category: str, label: str, planned, sub=None):
    """A figure of the whole run."""
    return declare(
        Product(
            rule,
            (Output(path, caption, category, labels={"figure": label}, subcategory=sub),),
            planned=planned,
        )
    )


_figure(
    "plot_examples_overview",
    paths.EXAMPLES_OVERVIEW,
    "examples_overview.rst",
    "Test sets",
    "every corruption at increasing Δv",
    once,
)

_GEIRHOS = "Geirhos et al.'s networks"
_figure(
    "plot_human_similarity",
    paths.HUMAN_SIMILARITY_FIGURE,
    "human_similarity.rst",
    "Humans",
    "human curves, similar and dissimilar corruptions",
    _when(references_in_use),
    sub="Similarity of corruptions",
)
_figure(
    "plot_geirhos_dnn",
    paths.GEIRHOS_DNN_FIGURE,
    "geirhos_dnn_vs_humans_figure.rst",
    "Humans",
    "HMRI/MRSI of GoogLeNet, ResNet-152, VGG-19 vs. humans",
    _when(geirhos_references),
    sub=_GEIRHOS,
)
_figure(
    "plot_geirhos_trained",
    paths.GEIRHOS_TRAINED_FIGURE,
    "geirhos_trained_vs_humans_figure.rst",
    "Humans",
    "trained networks: HMRI train x test",
    _when(_trained_table),
    sub=_GEIRHOS,
)
_figure(
    "plot_geirhos_consistency",
    paths.GEIRHOS_CONSISTENCY_FIGURE,
    "geirhos_error_consistency_figure.rst",
    "Humans",
    "error consistency with the humans vs dv",
    _when(geirhos_references),
    sub=_GEIRHOS,
)
_figure(
    "plot_model_consistency",
    paths.MODEL_CONSISTENCY_FIGURE,
    "model_error_consistency_figure.rst",
    "Error consistency",
    "error consistency between models vs dv",
    _when(lambda config: len(model_entries(config)) > 1),
)
_figure(
    "plot_defenses",
    paths.DEFENSES_FIGURE,
    "defenses_figure.rst",
    "Defenses",
    "defenses against the undefended models",
    _when(lambda config: defense_pairs(model_entries(config))),
)
