# Step II: human reference curves. Trials of each reference in use (shipped Geirhos et al. 2018
# data, or a user's own), their fixed conditions placed on the dv axis of this dataset's images,
# and the human curves from the same estimator as the models'.


rule ingest_human_reference:
    output:
        "results/humans/{reference}/trials.parquet",
    log:
        "results/logs/ingest_human_reference/{reference}.log",
    benchmark:
        "results/benchmarks/ingest_human_reference/{reference}.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        entry=human_reference_entry,
    script:
        "../workflow/scripts/ingest_human_reference.py"


rule map_human_conditions:
    input:
        trials="results/humans/{reference}/trials.parquet",
        images=CLEAN_IMAGES,
        index=CLEAN_INDEX,
    output:
        "results/humans/{reference}/conditions.parquet",
    log:
        "results/logs/map_human_conditions/{reference}.log",
    benchmark:
        "results/benchmarks/map_human_conditions/{reference}.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        seed=config["seed"],
        vif_variant=config["vif"]["variant"],
        mapping=human_mapping_options,
        corruptions=human_reference_corruption_options,
    script:
        "../workflow/scripts/map_human_conditions.py"


rule estimate_human_curves:
    input:
        trials="results/humans/{reference}/trials.parquet",
        conditions="results/humans/{reference}/conditions.parquet",
    output:
        expand(
            "results/humans/{{reference}}/{table}.parquet",
            table=["bins", "curves", "summary", "replicates"],
        ),
    log:
        "results/logs/estimate_human_curves/{reference}.log",
    benchmark:
        "results/benchmarks/estimate_human_curves/{reference}.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        settings=canonical(config["estimation"]),
        seed=config["seed"],
        anchor=HUMANS["anchor"],
        placement=HUMANS["placement"],
    script:
        "../workflow/scripts/estimate_human_curves.py"


rule geirhos_dnn_table:
    input:
        conditions=expand(
            "results/humans/{reference}/conditions.parquet", reference=GEIRHOS_REFS
        ),
        curves=expand(
            "results/humans/{reference}/curves.parquet", reference=GEIRHOS_REFS
        ),
    output:
        report(
            "results/tables/geirhos_dnn_vs_humans.csv",
            caption="../report/geirhos_dnn_vs_humans.rst",
            category="Tables",
        ),
    log:
        "results/logs/geirhos_dnn_table/geirhos_dnn_table.log",
    benchmark:
        "results/benchmarks/geirhos_dnn_table/geirhos_dnn_table.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        references={r: HUMANS["references"][r] for r in GEIRHOS_REFS},
        settings=canonical(config["estimation"]),
        seed=config["seed"],
        anchor=HUMANS["anchor"],
        placement=HUMANS["placement"],
    script:
        "../workflow/scripts/geirhos_dnn_table.py"
