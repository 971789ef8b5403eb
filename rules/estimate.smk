# Stage III (estimation): per model and corruption, dv bins, monotone curves, R_a and R_p, and
# HMRI/MRSI against the corruption's human reference; then the metrics table.


rule estimate_curves:
    input:
        predictions=prediction_group_files,
        clean="results/predictions/{model}/clean.parquet",
        reference=human_reference_files,
    output:
        bins="results/estimates/{model}/{corruption}/bins.parquet",
        curves="results/estimates/{model}/{corruption}/curves.parquet",
        metrics="results/estimates/{model}/{corruption}/metrics.parquet",
    log:
        "results/logs/estimate_curves/{model}/{corruption}.log",
    benchmark:
        "results/benchmarks/estimate_curves/{model}/{corruption}.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        settings=canonical(config["estimation"]),
        seed=config["seed"],
        dataset_label_space=config["dataset"]["label_space"],
        reference=human_reference,
    script:
        "../workflow/scripts/estimate_curves.py"


rule collect_metrics:
    input:
        metrics_files,
    output:
        report(
            "results/tables/vcr_metrics.csv",
            caption="../report/vcr_metrics.rst",
            category="Tables",
        ),
    log:
        "results/logs/collect_metrics/collect_metrics.log",
    benchmark:
        "results/benchmarks/collect_metrics/collect_metrics.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../workflow/scripts/collect_metrics.py"
