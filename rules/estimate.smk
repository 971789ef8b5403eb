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
    params:
        settings=config["estimation"],
        seed=config["seed"],
        dataset_label_space=config["dataset"]["label_space"],
        reference=human_reference,
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    log:
        "results/logs/estimate_curves/{model}/{corruption}.log",
    benchmark:
        "results/benchmarks/estimate_curves/{model}/{corruption}.tsv"
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
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    log:
        "results/logs/collect_metrics/collect_metrics.log",
    benchmark:
        "results/benchmarks/collect_metrics/collect_metrics.tsv"
    script:
        "../workflow/scripts/collect_metrics.py"
