# Figures and tables of the paper, from the tables, estimates and predictions of the other stages
# (docs/figures.md). Nothing here runs a model: `snakemake paper_figures` redraws everything, and a
# change of the `figures` config block reruns only these rules. PNG goes into the report; the
# other formats of `figures.formats` (PDF by default) are written beside it for papers.
#
# Each rule's outputs, stage version and locality are its declaration's (vcrbench.plan.products:
# path, report caption, category and labels, formats); a declaration that names its script,
# inputs and params has its rule made here, at the end of this file (docs/architecture.md, "Add a
# figure or table").
from vcrbench.plan import products

FIGURES = PLAN.figure_options


# --------------------------------------------------------------------------- tables


rule imagenet_c_accuracy:
    input:
        predictions=PLAN.imagenet_c_prediction_files,
        clean=PLAN.clean_prediction_files,
    output:
        *declared_files("imagenet_c_accuracy"),
    log:
        paths.log("imagenet_c_accuracy", "imagenet_c_accuracy"),
    benchmark:
        paths.benchmark("imagenet_c_accuracy", "imagenet_c_accuracy")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("imagenet_c_accuracy"),
    params:
        dataset_label_space=PLAN.dataset_label_space,
        version=PLAN.version("imagenet_c_accuracy"),
    script:
        "../workflow/scripts/imagenet_c_accuracy.py"


# ImageNet-C accuracy per severity on the images each model classifies correctly when clean.
rule imagenet_c_clean_correct:
    input:
        predictions=PLAN.imagenet_c_prediction_files,
        clean=PLAN.clean_prediction_files,
    output:
        *declared_files("imagenet_c_clean_correct"),
    log:
        paths.log("imagenet_c_clean_correct", "imagenet_c_clean_correct"),
    benchmark:
        paths.benchmark("imagenet_c_clean_correct", "imagenet_c_clean_correct")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("imagenet_c_clean_correct"),
    params:
        dataset_label_space=PLAN.dataset_label_space,
        version=PLAN.version("imagenet_c_clean_correct"),
    script:
        "../workflow/scripts/imagenet_c_accuracy.py"


# ImageNet-C's CE, relative CE and mCE (AlexNet-normalised; partial where the run lacks some of
# its 15 corruptions), per corruption and category.
rule imagenet_c_mce:
    input:
        accuracy=rules.imagenet_c_accuracy.output[0],
        predictions=PLAN.imagenet_c_prediction_files,
        clean=PLAN.clean_prediction_files,
    output:
        *declared_files("imagenet_c_mce"),
    log:
        paths.log("imagenet_c_mce", "imagenet_c_mce"),
    benchmark:
        paths.benchmark("imagenet_c_mce", "imagenet_c_mce")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("imagenet_c_mce"),
    params:
        version=PLAN.version("imagenet_c_mce"),
    script:
        "../workflow/scripts/imagenet_c_mce.py"


# Means by corruption category (noise, blur, weather, digital, other) of the ImageNet-C accuracy
# and of the VCR metrics.
rule corruption_categories:
    input:
        metrics=rules.collect_metrics.output[0],
        imagenet_c=(
            [paths.IMAGENET_C_ACCURACY] if PLAN.imagenet_c_prediction_files() else []
        ),
        # the clean accuracy on the ImageNet-C images (Yucel et al.'s ratio of reduction)
        predictions=PLAN.imagenet_c_prediction_files,
        clean=(
            PLAN.clean_prediction_files if PLAN.imagenet_c_prediction_files() else []
        ),
    output:
        *declared_files("corruption_categories"),
    log:
        paths.log("corruption_categories", "corruption_categories"),
    benchmark:
        paths.benchmark("corruption_categories", "corruption_categories")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("corruption_categories"),
    params:
        dataset_label_space=PLAN.dataset_label_space,
        defense_pairs=PLAN.defense_pairs,
        version=PLAN.version("corruption_categories"),
    script:
        "../workflow/scripts/corruption_categories.py"


rule paper_tables:
    input:
        metrics=rules.collect_metrics.output[0],
        coverage=rules.coverage_table.output.csv,
        differences=rules.model_differences.output[0],
    output:
        **declared_named("paper_tables"),
    log:
        paths.log("paper_tables", "paper_tables"),
    benchmark:
        paths.benchmark("paper_tables", "paper_tables")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("paper_tables"),
    params:
        corruptions=PLAN.corruptions,
        families=PLAN.families,
        label_space=FIGURES["label_space"],
        dataset_label_space=PLAN.dataset_label_space,
        sort_by=FIGURES["leaderboard_sort"],
        digits=FIGURES["digits"],
        version=PLAN.version("paper_tables"),
    script:
        "../workflow/scripts/paper_tables.py"


# Table 1: the models of the run (architecture, training method, family, source, parameters
# counted on the built model, clean accuracy), from their clean predictions.
rule models_table:
    input:
        clean=PLAN.clean_prediction_files,
    output:
        *declared_files("models_table"),
    log:
        paths.log("models_table", "models_table"),
    benchmark:
        paths.benchmark("models_table", "models_table")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("models_table"),
    params:
        models=PLAN.model_descriptions,
        digits=FIGURES["digits"],
        version=PLAN.version("models_table"),
    script:
        "../workflow/scripts/models_table.py"


rule retraining_table:
    input:
        metrics=rules.collect_metrics.output[0],
        differences=rules.model_differences.output[0],
    output:
        *declared_files("retraining_table"),
    log:
        paths.log("retraining_table", "retraining_table"),
    benchmark:
        paths.benchmark("retraining_table", "retraining_table")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("retraining_table"),
    params:
        pairs=PLAN.retrained_pairs,
        trained_on=PLAN.retrained_corruptions,
        corruptions=PLAN.corruptions,
        label_space=FIGURES["label_space"],
        dataset_label_space=PLAN.dataset_label_space,
        digits=FIGURES["digits"],
        version=PLAN.version("retraining_table"),
    script:
        "../workflow/scripts/retraining_table.py"


rule human_similarity:
    input:
        curves=PLAN.reference_files(paths.HUMAN_CURVES, PLAN.references),
        estimates=PLAN.reference_estimate_files(PLAN.references),
    output:
        *declared_files("human_similarity"),
        classes=paths.HUMAN_SIMILARITY_CLASSES,
    log:
        paths.log("human_similarity", "human_similarity"),
    benchmark:
        paths.benchmark("human_similarity", "human_similarity")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("human_similarity"),
    params:
        info=PLAN.reference_info,
        level=PLAN.setting("estimation.similarity_level"),
        band=PLAN.setting("estimation.similarity_band"),
        version=PLAN.version("human_similarity"),
    script:
        "../workflow/scripts/human_similarity.py"


# --------------------------------------------------------------------------- figures


rule plot_curves:
    input:
        curves=PLAN.model_curve_files,
        reference=PLAN.human_reference_files,
    output:
        *declared_files("plot_curves"),
    log:
        paths.log("plot_curves", "{corruption}"),
    benchmark:
        paths.benchmark("plot_curves", "{corruption}")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("plot_curves"),
    params:
        families=PLAN.families,
        style=FIGURES,
        dataset_label_space=PLAN.dataset_label_space,
        reference=PLAN.human_reference,
        version=PLAN.version("plot_curves"),
    script:
        "../workflow/scripts/plot_curves.py"


rule plot_hmri_mrsi:
    input:
        metrics=rules.collect_metrics.output[0],
    output:
        *declared_files("plot_hmri_mrsi"),
    log:
        paths.log("plot_hmri_mrsi", "{corruption}"),
    benchmark:
        paths.benchmark("plot_hmri_mrsi", "{corruption}")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("plot_hmri_mrsi"),
    params:
        families=PLAN.families,
        style=FIGURES,
        version=PLAN.version("plot_hmri_mrsi"),
    script:
        "../workflow/scripts/plot_hmri_mrsi.py"


rule plot_dv_histograms:
    input:
        histograms=rules.coverage_table.output.histograms,
        coverage=rules.coverage_table.output.csv,
    output:
        *declared_files("plot_dv_histograms"),
    log:
        paths.log("plot_dv_histograms", "{corruption}"),
    benchmark:
        paths.benchmark("plot_dv_histograms", "{corruption}")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("plot_dv_histograms"),
    params:
        style=FIGURES,
        version=PLAN.version("plot_dv_histograms"),
    script:
        "../workflow/scripts/plot_dv_histograms.py"


# Fig. 3/10: one clean image at increasing Δv, from the test set's own shards.
rule plot_examples:
    input:
        shards=PLAN.corruption_shard_files,
        clean_images=paths.CLEAN_IMAGES,
        clean_index=paths.CLEAN_INDEX,
    output:
        *declared_files("plot_examples"),
    log:
        paths.log("plot_examples", "{corruption}"),
    benchmark:
        paths.benchmark("plot_examples", "{corruption}")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("plot_examples"),
    params:
        n_bins=PLAN.setting("coverage.bins"),
        style=FIGURES,
        version=PLAN.version("plot_examples"),
    script:
        "../workflow/scripts/plot_examples.py"


# Fig. 3: every corruption of the run as a row, one clean image at increasing Δv, from the shards.
rule plot_examples_overview:
    input:
        shards=PLAN.all_shard_files,
        clean_images=paths.CLEAN_IMAGES,
        clean_index=paths.CLEAN_INDEX,
    output:
        *declared_files("plot_examples_overview"),
    log:
        paths.log("plot_examples_overview", "plot_examples_overview"),
    benchmark:
        paths.benchmark("plot_examples_overview", "plot_examples_overview")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("plot_examples_overview"),
    params:
        n_bins=PLAN.setting("coverage.bins"),
        style=FIGURES,
        version=PLAN.version("plot_examples_overview"),
    script:
        "../workflow/scripts/plot_examples_overview.py"


rule plot_imagenet_c_vs_vcr:
    input:
        imagenet_c=rules.imagenet_c_accuracy.output[0],
        metrics=rules.collect_metrics.output[0],
    output:
        *declared_files("plot_imagenet_c_vs_vcr"),
    log:
        paths.log("plot_imagenet_c_vs_vcr", "{corruption}"),
    benchmark:
        paths.benchmark("plot_imagenet_c_vs_vcr", "{corruption}")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("plot_imagenet_c_vs_vcr"),
    params:
        families=PLAN.families,
        style=FIGURES,
        dataset_label_space=PLAN.dataset_label_space,
        version=PLAN.version("plot_imagenet_c_vs_vcr"),
    script:
        "../workflow/scripts/plot_imagenet_c_vs_vcr.py"


rule plot_human_similarity:
    input:
        curves=PLAN.reference_files(paths.HUMAN_CURVES, PLAN.references),
        estimates=PLAN.reference_estimate_files(PLAN.references),
    output:
        *declared_files("plot_human_similarity"),
    log:
        paths.log("plot_human_similarity", "plot_human_similarity"),
    benchmark:
        paths.benchmark("plot_human_similarity", "plot_human_similarity")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("plot_human_similarity"),
    params:
        info=PLAN.reference_info,
        level=PLAN.setting("estimation.similarity_level"),
        band=PLAN.setting("estimation.similarity_band"),
        style=FIGURES,
        version=PLAN.version("plot_human_similarity"),
    script:
        "../workflow/scripts/plot_human_similarity.py"


rule plot_geirhos_dnn:
    input:
        rules.geirhos_dnn_table.output[0],
    output:
        *declared_files("plot_geirhos_dnn"),
    log:
        paths.log("plot_geirhos_dnn", "plot_geirhos_dnn"),
    benchmark:
        paths.benchmark("plot_geirhos_dnn", "plot_geirhos_dnn")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("plot_geirhos_dnn"),
    params:
        style=FIGURES,
        version=PLAN.version("plot_geirhos_dnn"),
    script:
        "../workflow/scripts/plot_geirhos_dnn.py"


# The same script draws these from their tables (it dispatches on the rule's name).
use rule plot_geirhos_dnn as plot_geirhos_trained with:
    input:
        rules.geirhos_trained_table.output[0],
    output:
        *declared_files("plot_geirhos_trained"),
    log:
        paths.log("plot_geirhos_trained", "plot_geirhos_trained"),
    benchmark:
        paths.benchmark("plot_geirhos_trained", "plot_geirhos_trained")
    localrule: True
    resources:
        **PLAN.resources("plot_geirhos_trained"),
    params:
        version=PLAN.version("plot_geirhos_trained"),


use rule plot_geirhos_dnn as plot_geirhos_consistency with:
    input:
        rules.geirhos_error_consistency.output[0],
    output:
        *declared_files("plot_geirhos_consistency"),
    log:
        paths.log("plot_geirhos_consistency", "plot_geirhos_consistency"),
    benchmark:
        paths.benchmark("plot_geirhos_consistency", "plot_geirhos_consistency")
    localrule: True
    resources:
        **PLAN.resources("plot_geirhos_consistency"),
    params:
        version=PLAN.version("plot_geirhos_consistency"),


use rule plot_geirhos_dnn as plot_model_consistency with:
    input:
        rules.model_error_consistency.output[0],
    output:
        *declared_files("plot_model_consistency"),
    log:
        paths.log("plot_model_consistency", "plot_model_consistency"),
    benchmark:
        paths.benchmark("plot_model_consistency", "plot_model_consistency")
    localrule: True
    resources:
        **PLAN.resources("plot_model_consistency"),
    params:
        version=PLAN.version("plot_model_consistency"),


rule plot_defenses:
    input:
        rules.defense_table.output[0],
    output:
        *declared_files("plot_defenses"),
    log:
        paths.log("plot_defenses", "plot_defenses"),
    benchmark:
        paths.benchmark("plot_defenses", "plot_defenses")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("plot_defenses"),
    params:
        style=FIGURES,
        version=PLAN.version("plot_defenses"),
    script:
        "../workflow/scripts/plot_defenses.py"


# --------------------------------------------------------------------------- declared rules


# The rule of each figure or table declared with its script, inputs and params.
for _product in products.generated():

    rule:
        name:
            _product.rule
        input:
            **_product.inputs(PLAN),
        output:
            *declared_files(_product.rule),
        log:
            paths.log(_product.rule, declared_job(_product.rule)),
        benchmark:
            paths.benchmark(_product.rule, declared_job(_product.rule))
        localrule: _product.local
        conda:
            VCRBENCH_ENV
        resources:
            **PLAN.resources(_product.rule),
        params:
            **(_product.params(PLAN) if _product.params else {}),
            version=PLAN.version(_product.rule),
        script:
            _product.script


# --------------------------------------------------------------------------- target


rule paper_figures:
    input:
        PLAN.figure_targets,
    localrule: True
