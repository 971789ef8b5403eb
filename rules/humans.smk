# Step II: human reference curves. Trials of each reference in use (shipped Geirhos et al. 2018
# data, or a user's own), their fixed conditions placed on the dv axis of this dataset's images,
# and the human curves from the same estimator as the models'.


rule ingest_human_reference:
    output:
        paths.HUMAN_TRIALS,
    log:
        paths.log("ingest_human_reference", "{reference}"),
    benchmark:
        paths.benchmark("ingest_human_reference", "{reference}")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("ingest_human_reference"),
    params:
        entry=PLAN.reference_entry,
        version=PLAN.version("ingest_human_reference"),
    script:
        "../workflow/scripts/ingest_human_reference.py"


rule map_human_conditions:
    input:
        trials=rules.ingest_human_reference.output[0],
        images=rules.prepare_clean_set.output.images,
        index=rules.prepare_clean_set.output.index,
    output:
        paths.HUMAN_CONDITIONS,
    log:
        paths.log("map_human_conditions", "{reference}"),
    benchmark:
        paths.benchmark("map_human_conditions", "{reference}")
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("map_human_conditions"),
    params:
        **PLAN.measurement(),
        seed=PLAN.setting("seed"),
        vif_variant=PLAN.setting("vif.variant"),
        mapping=PLAN.mapping_options,
        corruptions=PLAN.reference_corruption_options,
        version=PLAN.version("map_human_conditions"),
    script:
        "../workflow/scripts/map_human_conditions.py"


rule estimate_human_curves:
    input:
        trials=rules.ingest_human_reference.output[0],
        conditions=rules.map_human_conditions.output[0],
    output:
        paths.human_estimates(),
    log:
        paths.log("estimate_human_curves", "{reference}"),
    benchmark:
        paths.benchmark("estimate_human_curves", "{reference}")
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("estimate_human_curves"),
    params:
        settings=PLAN.section("estimation"),
        seed=PLAN.setting("seed"),
        anchor=PLAN.setting("humans.anchor"),
        placement=PLAN.setting("humans.placement"),
        entry=PLAN.reference_entry,
        version=PLAN.version("estimate_human_curves"),
    script:
        "../workflow/scripts/estimate_human_curves.py"


rule geirhos_dnn_table:
    input:
        conditions=PLAN.reference_files(paths.HUMAN_CONDITIONS, PLAN.geirhos_references),
        curves=PLAN.reference_files(paths.HUMAN_CURVES, PLAN.geirhos_references),
    output:
        report(
            paths.GEIRHOS_DNN_TABLE,
            caption="../report/geirhos_dnn_vs_humans.rst",
            category="Tables",
        ),
    log:
        paths.log("geirhos_dnn_table", "geirhos_dnn_table"),
    benchmark:
        paths.benchmark("geirhos_dnn_table", "geirhos_dnn_table")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("geirhos_dnn_table"),
    params:
        references=PLAN.geirhos_reference_entries,
        settings=PLAN.section("estimation"),
        seed=PLAN.setting("seed"),
        anchor=PLAN.setting("humans.anchor"),
        placement=PLAN.setting("humans.placement"),
        metric_range=PLAN.setting("humans.metric_range"),
        scenario_level=PLAN.setting("humans.scenario_level"),
        version=PLAN.version("geirhos_dnn_table"),
    script:
        "../workflow/scripts/geirhos_dnn_table.py"


rule geirhos_conditions_table:
    output:
        report(
            paths.GEIRHOS_CONDITIONS,
            caption="../report/geirhos_conditions.rst",
            category="Tables",
        ),
    log:
        paths.log("geirhos_conditions_table", "geirhos_conditions_table"),
    benchmark:
        paths.benchmark("geirhos_conditions_table", "geirhos_conditions_table")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("geirhos_conditions_table"),
    params:
        version=PLAN.version("geirhos_conditions_table"),
    script:
        "../workflow/scripts/geirhos_conditions_table.py"


# The networks trained on distortions, train x test: the same inputs and script (which dispatches
# on the rule's name).
use rule geirhos_dnn_table as geirhos_trained_table with:
    output:
        report(
            paths.GEIRHOS_TRAINED_TABLE,
            caption="../report/geirhos_trained_vs_humans.rst",
            category="Tables",
        ),
    log:
        paths.log("geirhos_trained_table", "geirhos_trained_table"),
    benchmark:
        paths.benchmark("geirhos_trained_table", "geirhos_trained_table")
    localrule: True
    resources:
        **PLAN.resources("geirhos_trained_table"),
    params:
        version=PLAN.version("geirhos_trained_table"),


rule geirhos_error_consistency:
    input:
        conditions=PLAN.reference_files(paths.HUMAN_CONDITIONS, PLAN.geirhos_references),
    output:
        report(
            paths.GEIRHOS_CONSISTENCY,
            caption="../report/geirhos_error_consistency.rst",
            category="Tables",
        ),
    log:
        paths.log("geirhos_error_consistency", "geirhos_error_consistency"),
    benchmark:
        paths.benchmark("geirhos_error_consistency", "geirhos_error_consistency")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("geirhos_error_consistency"),
    params:
        references=PLAN.geirhos_reference_entries,
        n_bins=PLAN.setting("estimation.bins"),
        version=PLAN.version("geirhos_error_consistency"),
    script:
        "../workflow/scripts/geirhos_error_consistency.py"


rule screening_table:
    input:
        PLAN.setting("humans.screening.path") or [],
    output:
        report(
            paths.SCREENING_TABLE,
            caption="../report/screening_tests.rst",
            category="Tables",
        ),
    log:
        paths.log("screening_table", "screening_table"),
    benchmark:
        paths.benchmark("screening_table", "screening_table")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("screening_table"),
    params:
        alpha=PLAN.setting("humans.screening.alpha"),
        configured=PLAN.corruptions,
        version=PLAN.version("screening_table"),
    script:
        "../workflow/scripts/screening_table.py"
