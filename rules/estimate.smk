# Stage III (estimation): per model and corruption, dv bins, monotone curves, R_a and R_p, and
# HMRI/MRSI against the corruption's human reference; then the metrics table.


rule estimate_curves:
    input:
        predictions=PLAN.prediction_group_files,
        clean=paths.PREDICTIONS_CLEAN,
        reference=PLAN.human_reference_files,
    output:
        bins=paths.MODEL_BINS,
        curves=paths.MODEL_CURVES,
        metrics=paths.MODEL_METRICS,
        replicates=paths.MODEL_REPLICATES,
    log:
        paths.log("estimate_curves", "{model}/{corruption}"),
    benchmark:
        paths.benchmark("estimate_curves", "{model}/{corruption}")
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("estimate_curves"),
    params:
        settings=PLAN.section("estimation"),
        seed=PLAN.setting("seed"),
        dataset_label_space=PLAN.dataset_label_space,
        reference=PLAN.human_reference,
        scenario_level=PLAN.setting("humans.scenario_level"),
        zero_shot=PLAN.zero_shot,
        version=PLAN.version("estimate_curves"),
    script:
        "../workflow/scripts/estimate_curves.py"


# Datasets with their own classes: per class x dv bin accuracy, and the class transitions between
# each sample's clean and corrupted prediction (seen/unseen with a zero-shot split).
rule zero_shot_tables:
    input:
        predictions=PLAN.group_prediction_files,
        clean=PLAN.clean_prediction_files,
    output:
        classes=report(
            paths.ZERO_SHOT_CLASSES,
            caption="../report/zero_shot_classes.rst",
            category="Tables",
        ),
        transitions=report(
            paths.ZERO_SHOT_TRANSITIONS,
            caption="../report/zero_shot_transitions.rst",
            category="Tables",
        ),
    log:
        paths.log("zero_shot_tables", "zero_shot_tables"),
    benchmark:
        paths.benchmark("zero_shot_tables", "zero_shot_tables")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("zero_shot_tables"),
    params:
        settings=PLAN.zero_shot_tables_settings(),
        n_bins=PLAN.setting("estimation.bins"),
        version=PLAN.version("zero_shot_tables"),
    script:
        "../workflow/scripts/zero_shot_tables.py"


# Curves and R-hat on the samples whose clean image the model classifies correctly (Yucel et al.'s
# "corrupting only the correct predictions").
rule clean_correct:
    input:
        predictions=PLAN.group_prediction_files,
        clean=PLAN.clean_prediction_files,
    output:
        table=report(
            paths.CLEAN_CORRECT,
            caption="../report/clean_correct.rst",
            category="Tables",
        ),
        curves=paths.CLEAN_CORRECT_CURVES,
    log:
        paths.log("clean_correct", "clean_correct"),
    benchmark:
        paths.benchmark("clean_correct", "clean_correct")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("clean_correct"),
    params:
        settings=PLAN.section("estimation"),
        seed=PLAN.setting("seed"),
        dataset_label_space=PLAN.dataset_label_space,
        zero_shot=PLAN.zero_shot,
        analysis="clean_correct",
        version=PLAN.version("clean_correct"),
    script:
        "../workflow/scripts/restricted_tables.py"


# A zero-shot split: the decision restricted to the unseen classes, from the saved
# log-probabilities (inference.save_logprobs).
rule zero_shot_unseen_only:
    input:
        predictions=PLAN.group_prediction_files,
        clean=PLAN.clean_prediction_files,
    output:
        table=report(
            paths.ZERO_SHOT_UNSEEN_ONLY,
            caption="../report/zero_shot_unseen_only.rst",
            category="Tables",
        ),
        curves=paths.ZERO_SHOT_UNSEEN_ONLY_CURVES,
    log:
        paths.log("zero_shot_unseen_only", "zero_shot_unseen_only"),
    benchmark:
        paths.benchmark("zero_shot_unseen_only", "zero_shot_unseen_only")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("zero_shot_unseen_only"),
    params:
        settings=PLAN.section("estimation"),
        seed=PLAN.setting("seed"),
        dataset_label_space=PLAN.dataset_label_space,
        zero_shot=PLAN.zero_shot,
        analysis="unseen_only",
        version=PLAN.version("zero_shot_unseen_only"),
    script:
        "../workflow/scripts/restricted_tables.py"


rule collect_metrics:
    input:
        PLAN.metrics_files,
    output:
        report(
            paths.VCR_METRICS,
            caption="../report/vcr_metrics.rst",
            category="Tables",
        ),
    log:
        paths.log("collect_metrics", "collect_metrics"),
    benchmark:
        paths.benchmark("collect_metrics", "collect_metrics")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("collect_metrics"),
    params:
        version=PLAN.version("collect_metrics"),
    script:
        "../workflow/scripts/collect_metrics.py"


rule model_differences:
    input:
        PLAN.replicate_files,
    output:
        report(
            paths.MODEL_DIFFERENCES,
            caption="../report/model_differences.rst",
            category="Tables",
        ),
    log:
        paths.log("model_differences", "model_differences"),
    benchmark:
        paths.benchmark("model_differences", "model_differences")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("model_differences"),
    params:
        relations=PLAN.retrained_pairs,
        version=PLAN.version("model_differences"),
    script:
        "../workflow/scripts/model_differences.py"


rule defense_table:
    input:
        predictions=PLAN.defense_prediction_files,
        replicates=PLAN.defense_replicate_files,
    output:
        report(
            paths.DEFENSES_TABLE,
            caption="../report/defenses.rst",
            category="Tables",
            labels={"table": "defenses"},
        ),
    log:
        paths.log("defense_table", "defense_table"),
    benchmark:
        paths.benchmark("defense_table", "defense_table")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("defense_table"),
    params:
        pairs=PLAN.defense_pairs,
        defenses=PLAN.defense_labels(),
        predictions=PLAN.defense_predictions(),
        clean=PLAN.defense_clean(),
        settings=PLAN.section("estimation"),
        seed=PLAN.setting("seed"),
        dataset_label_space=PLAN.dataset_label_space,
        version=PLAN.version("defense_table"),
    script:
        "../workflow/scripts/defense_table.py"


rule model_error_consistency:
    input:
        PLAN.group_prediction_files,
    output:
        report(
            paths.MODEL_CONSISTENCY,
            caption="../report/model_error_consistency.rst",
            category="Tables",
        ),
    log:
        paths.log("model_error_consistency", "model_error_consistency"),
    benchmark:
        paths.benchmark("model_error_consistency", "model_error_consistency")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("model_error_consistency"),
    params:
        n_bins=PLAN.setting("estimation.bins"),
        label_spaces=PLAN.setting("estimation.label_spaces"),
        dataset_label_space=PLAN.dataset_label_space,
        version=PLAN.version("model_error_consistency"),
    script:
        "../workflow/scripts/model_error_consistency.py"


rule definitions_table:
    output:
        report(
            paths.DEFINITIONS,
            caption="../report/definitions.rst",
            category="Tables",
        ),
    log:
        paths.log("definitions_table", "definitions_table"),
    benchmark:
        paths.benchmark("definitions_table", "definitions_table")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("definitions_table"),
    params:
        rows=vplan.definitions.definitions(PLAN.config),
        version=PLAN.version("definitions_table"),
    script:
        "../workflow/scripts/definitions_table.py"
