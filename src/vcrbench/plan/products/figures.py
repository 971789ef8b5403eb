"""The workflow's own figures (docs/figures.md), declared once each (:mod:`.registry`): their rules
are made from these declarations in ``rules/figures.smk``. Every figure is drawn with the run's
``figures`` options (the param ``style``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from vcrbench.plan import paths
from vcrbench.plan.config import corruption_names, imagenet_c_corruptions, model_entries
from vcrbench.plan.humans import geirhos_references, references_in_use
from vcrbench.plan.models import defense_pairs
from vcrbench.plan.products.common import per, script, trained_table, when, with_humans
from vcrbench.plan.products.registry import Output, Product, declare
from vcrbench.plan.products.tables import reference_curves, similarity


def _per_corruption(kind: str, caption: str, category: str, label: str) -> tuple[Output]:
    """A figure per corruption (``results/figures/<kind>/{corruption}.<ext>``), the rule's
    wildcard."""
    return (
        Output(
            paths.FIGURE.replace("{kind}", kind),
            caption,
            category,
            labels={"corruption": "{corruption}", "figure": label},
            subcategory="{corruption}",
        ),
    )


def _whole(path: str, caption: str, category: str, label: str, sub=None) -> tuple[Output]:
    """A figure of the whole run."""
    return (Output(path, caption, category, labels={"figure": label}, subcategory=sub),)


def _styled(more: Callable[[object], Mapping] = lambda plan: {}):
    """The params of a drawing: ``more(plan)`` and the run's figure options."""
    return lambda plan: {**more(plan), "style": plan.figure_options}


def _examples(shards) -> dict:
    """The inputs of a grid of examples: the test sets' ``shards`` and the clean set."""
    return {"shards": shards, "clean_images": paths.CLEAN_IMAGES, "clean_index": paths.CLEAN_INDEX}


# ----------------------------------------------------------------------- per corruption

declare(
    Product(
        "plot_curves",
        _per_corruption("curves", "curves.rst", "Models vs humans", "curves s_a, s_p"),
        script=script("plot_curves"),
        inputs=lambda plan: {
            "curves": plan.model_curve_files,
            "reference": plan.human_reference_files,
        },
        params=lambda plan: {
            "families": plan.families,
            "style": plan.figure_options,
            "dataset_label_space": plan.dataset_label_space,
            "reference": plan.human_reference,
        },
        planned=per(corruption_names),
    )
)
declare(
    Product(
        "plot_hmri_mrsi",
        _per_corruption("hmri_mrsi", "hmri_mrsi.rst", "Models vs humans", "HMRI and MRSI"),
        script=script("plot_hmri_mrsi"),
        inputs=lambda plan: {"metrics": paths.VCR_METRICS},
        params=_styled(lambda plan: {"families": plan.families}),
        planned=per(with_humans),
    )
)
declare(
    Product(
        "plot_dv_histograms",
        _per_corruption("dv_histograms", "dv_histograms.rst", "Test sets", "Δv histograms"),
        script=script("plot_dv_histograms"),
        inputs=lambda plan: {"histograms": paths.DV_HISTOGRAMS, "coverage": paths.COVERAGE},
        params=_styled(),
        planned=per(corruption_names),
    )
)

# Fig. 3/10: one clean image at increasing Δv, from the test set's own shards.
declare(
    Product(
        "plot_examples",
        _per_corruption("examples", "examples.rst", "Test sets", "examples at increasing Δv"),
        script=script("plot_examples"),
        inputs=lambda plan: _examples(plan.corruption_shard_files),
        params=_styled(lambda plan: {"n_bins": plan.setting("coverage.bins")}),
        version=2,  # 2: up to the highest Δv of the shards (was: bin 35's centre, about .91)
        planned=per(corruption_names),
    )
)
declare(
    Product(
        "plot_imagenet_c_vs_vcr",
        _per_corruption(
            "imagenet_c_vs_vcr",
            "imagenet_c_vs_vcr.rst",
            "ImageNet-C vs VCR",
            "ImageNet-C accuracy vs R̂",
        ),
        script=script("plot_imagenet_c_vs_vcr"),
        inputs=lambda plan: {"imagenet_c": paths.IMAGENET_C_ACCURACY, "metrics": paths.VCR_METRICS},
        params=lambda plan: {
            "families": plan.families,
            "style": plan.figure_options,
            "dataset_label_space": plan.dataset_label_space,
        },
        planned=per(imagenet_c_corruptions),
    )
)

# ----------------------------------------------------------------------- of the whole run

# Fig. 3: every corruption of the run as a row, one clean image at increasing Δv, from the shards.
declare(
    Product(
        "plot_examples_overview",
        _whole(
            paths.EXAMPLES_OVERVIEW,
            "examples_overview.rst",
            "Test sets",
            "every corruption at increasing Δv",
        ),
        script=script("plot_examples_overview"),
        inputs=lambda plan: _examples(plan.all_shard_files),
        params=_styled(lambda plan: {"n_bins": plan.setting("coverage.bins")}),
    )
)
declare(
    Product(
        "plot_human_similarity",
        _whole(
            paths.HUMAN_SIMILARITY_FIGURE,
            "human_similarity.rst",
            "Humans",
            "human curves, similar and dissimilar corruptions",
            sub="Similarity of corruptions",
        ),
        script=script("plot_human_similarity"),
        inputs=reference_curves,
        params=_styled(similarity),
        planned=when(references_in_use),
    )
)


def _table_figure(rule, path, caption, category, label, table, planned, sub=None, name=None):
    """A figure drawn from one table (``table``) by ``workflow/scripts/<name or rule>.py``."""
    return declare(
        Product(
            rule,
            _whole(path, caption, category, label, sub),
            script=script(name or rule),
            inputs=lambda plan: {"table": table},
            params=_styled(),
            planned=planned,
        )
    )


# Geirhos et al.'s networks against the humans: one script draws the three figures from their
# tables (it dispatches on the rule's name), and the error consistency between models too.
_GEIRHOS = "Geirhos et al.'s networks"
_table_figure(
    "plot_geirhos_dnn",
    paths.GEIRHOS_DNN_FIGURE,
    "geirhos_dnn_vs_humans_figure.rst",
    "Humans",
    "HMRI/MRSI of GoogLeNet, ResNet-152, VGG-19 vs. humans",
    paths.GEIRHOS_DNN_TABLE,
    when(geirhos_references),
    sub=_GEIRHOS,
)
_table_figure(
    "plot_geirhos_trained",
    paths.GEIRHOS_TRAINED_FIGURE,
    "geirhos_trained_vs_humans_figure.rst",
    "Humans",
    "trained networks: HMRI train x test",
    paths.GEIRHOS_TRAINED_TABLE,
    when(trained_table),
    sub=_GEIRHOS,
    name="plot_geirhos_dnn",
)
_table_figure(
    "plot_geirhos_consistency",
    paths.GEIRHOS_CONSISTENCY_FIGURE,
    "geirhos_error_consistency_figure.rst",
    "Humans",
    "error consistency with the humans vs dv",
    paths.GEIRHOS_CONSISTENCY,
    when(geirhos_references),
    sub=_GEIRHOS,
    name="plot_geirhos_dnn",
)
_table_figure(
    "plot_model_consistency",
    paths.MODEL_CONSISTENCY_FIGURE,
    "model_error_consistency_figure.rst",
    "Error consistency",
    "error consistency between models vs dv",
    paths.MODEL_CONSISTENCY,
    when(lambda config: len(model_entries(config)) > 1),
    name="plot_geirhos_dnn",
)
_table_figure(
    "plot_defenses",
    paths.DEFENSES_FIGURE,
    "defenses_figure.rst",
    "Defenses",
    "defenses against the undefended models",
    paths.DEFENSES_TABLE,
    when(lambda config: defense_pairs(model_entries(config))),
)
