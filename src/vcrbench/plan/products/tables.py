"""The workflow's own tables (docs/figures.md), declared once each (:mod:`.registry`): their rules
are made from these declarations in ``rules/figures.smk``."""

from __future__ import annotations

from vcrbench.plan import paths
from vcrbench.plan.config import imagenet_c_corruptions
from vcrbench.plan.humans import references_in_use
from vcrbench.plan.products.common import CSV, TABLE_FORMATS, mce, script, when
from vcrbench.plan.products.registry import Output, Product, declare
from vcrbench.plan.retrain import retrained_pairs


def _paper_table(name: str) -> str:
    return f"{paths.PAPER_TABLES}/{name}.{{ext}}"


def _paper(name: str, caption: str, label: str, output=None, category="Tables") -> Output:
    """A table of the paper (``results/tables/paper/<name>``, CSV, Markdown and LaTeX)."""
    labels = {"table": label}
    return Output(_paper_table(name), caption, category, labels, formats=TABLE_FORMATS, name=output)


def _csv(path: str, caption: str, label: str) -> tuple[Output]:
    """A table in CSV alone, shown among the report's tables."""
    return (Output(path, caption, "Tables", labels={"table": label}, formats=CSV),)


def _imagenet_c_predictions(plan) -> dict:
    return {"predictions": plan.imagenet_c_prediction_files, "clean": plan.clean_prediction_files}


def _imagenet_c_accuracy(rule: str, path: str, caption: str, label: str) -> None:
    """ImageNet-C accuracy per severity, of every image or of those each model classifies
    correctly when clean (one script, which dispatches on the rule's name)."""
    declare(
        Product(
            rule,
            _csv(path, caption, label),
            script=script("imagenet_c_accuracy"),
            inputs=_imagenet_c_predictions,
            params=lambda plan: {"dataset_label_space": plan.dataset_label_space},
            planned=when(imagenet_c_corruptions),
        )
    )


_imagenet_c_accuracy(
    "imagenet_c_accuracy",
    paths.IMAGENET_C_ACCURACY,
    "imagenet_c_accuracy.rst",
    "ImageNet-C accuracy",
)
_imagenet_c_accuracy(
    "imagenet_c_clean_correct",
    paths.IMAGENET_C_CLEAN_CORRECT,
    "imagenet_c_clean_correct.rst",
    "ImageNet-C on clean-correct images",
)

# ImageNet-C's CE, relative CE and mCE (AlexNet-normalised; partial where the run lacks some of
# its 15 corruptions), per corruption and category.
declare(
    Product(
        "imagenet_c_mce",
        _csv(paths.IMAGENET_C_MCE, "imagenet_c_mce.rst", "ImageNet-C mCE"),
        script=script("imagenet_c_mce"),
        inputs=lambda plan: {
            "accuracy": paths.IMAGENET_C_ACCURACY,
            **_imagenet_c_predictions(plan),
        },
        planned=when(mce),
    )
)

# Means by corruption category (noise, blur, weather, digital, other) of the ImageNet-C accuracy
# and of the VCR metrics; with ImageNet-C, the clean accuracy on its images too (Yucel et al.'s
# ratio of reduction).
declare(
    Product(
        "corruption_categories",
        _csv(paths.CORRUPTION_CATEGORIES, "corruption_categories.rst", "by corruption category"),
        script=script("corruption_categories"),
        inputs=lambda plan: {
            "metrics": paths.VCR_METRICS,
            "imagenet_c": [paths.IMAGENET_C_ACCURACY] if plan.imagenet_c_prediction_files() else [],
            "predictions": plan.imagenet_c_prediction_files,
            "clean": plan.clean_prediction_files if plan.imagenet_c_prediction_files() else [],
        },
        params=lambda plan: {
            "dataset_label_space": plan.dataset_label_space,
            "defense_pairs": plan.defense_pairs,
        },
    )
)

# Table 2 (Δv coverage), the metrics with their intervals, and a leaderboard per corruption.
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
        script=script("paper_tables"),
        inputs=lambda plan: {
            "metrics": paths.VCR_METRICS,
            "coverage": paths.COVERAGE,
            "differences": paths.MODEL_DIFFERENCES,
        },
        params=lambda plan: {
            "corruptions": plan.corruptions,
            "families": plan.families,
            "label_space": plan.figure_options["label_space"],
            "dataset_label_space": plan.dataset_label_space,
            "sort_by": plan.figure_options["leaderboard_sort"],
            "digits": plan.figure_options["digits"],
        },
    )
)

# Table 1: the models of the run (architecture, training method, family, source, parameters
# counted on the built model, clean accuracy), from their clean predictions.
declare(
    Product(
        "models_table",
        (_paper("table1_models", "table1_models.rst", "Table 1: models"),),
        script=script("models_table"),
        inputs=lambda plan: {"clean": plan.clean_prediction_files},
        params=lambda plan: {
            "models": plan.model_descriptions,
            "digits": plan.figure_options["digits"],
        },
        version=2,  # 2: the paper's columns architecture and training
    )
)

# Table 3: the VCR metrics before and after retraining.
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
        script=script("retraining_table"),
        inputs=lambda plan: {"metrics": paths.VCR_METRICS, "differences": paths.MODEL_DIFFERENCES},
        params=lambda plan: {
            "pairs": plan.retrained_pairs,
            "trained_on": plan.retrained_corruptions,
            "corruptions": plan.corruptions,
            "label_space": plan.figure_options["label_space"],
            "dataset_label_space": plan.dataset_label_space,
            "digits": plan.figure_options["digits"],
        },
        planned=when(retrained_pairs),
    )
)


def reference_curves(plan) -> dict:
    """The human references' curves and estimates (the similarity table's and figure's inputs)."""
    return {
        "curves": plan.reference_files(paths.HUMAN_CURVES, plan.references),
        "estimates": plan.reference_estimate_files(plan.references),
    }


def similarity(plan) -> dict:
    """What decides which corruptions the humans find similar (the table's and figure's params)."""
    return {
        "info": plan.reference_info,
        "level": plan.setting("estimation.similarity_level"),
        "band": plan.setting("estimation.similarity_band"),
    }


# Pairwise tests of the human curves' similarity, and the classes of similar corruptions they give.
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
        script=script("human_similarity"),
        inputs=reference_curves,
        params=similarity,
        other_outputs={"classes": paths.HUMAN_SIMILARITY_CLASSES},
        planned=when(references_in_use),
    )
)
