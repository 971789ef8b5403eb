# Figures and tables of the paper, from the tables, estimates and predictions of the other stages
# (docs/figures.md). Nothing here runs a model: `snakemake paper_figures` redraws everything, and a
# change of the `figures` config block reruns only these rules. PNG goes into the report; the
# other formats of `figures.formats` (PDF by default) are written beside it for papers.
import functools

from vcrbench.figures import options as vfigures
from vcrbench import tables as vtables

try:
    FIGURES = vfigures.check_options(config["figures"])
except vfigures.FigureConfigError as exc:
    raise WorkflowError(f"invalid config: {exc}") from None

EXTRA_FORMATS = [fmt for fmt in FIGURES["formats"] if fmt != "png"]
FAMILIES = vfigures.model_families(config)
HUMAN_INFO = vfigures.human_reference_info(config)
RETRAINED_PAIRS = vfigures.retrained_pairs(config)
RETRAINED_ON = vfigures.retrained_corruptions(config)
PAPER_TABLES = vfigures.PAPER_TABLES
HUMAN_ESTIMATES = expand(
    "results/humans/{reference}/{table}.parquet",
    reference=HUMAN_REFS,
    table=["bins", "curves", "summary", "replicates"],
)
# What `rule all` (rules/common.smk) and `rule paper_figures` ask for (the library lists it).
figure_outputs = functools.partial(vfigures.figure_targets, config)


# --------------------------------------------------------------------------- tables


rule imagenet_c_accuracy:
    input:
        predictions=expand(
            "results/predictions/{model}/imagenet-c/{corruption}.parquet",
            model=MODELS,
            corruption=IMAGENET_C,
        ),
        clean=expand("results/predictions/{model}/clean.parquet", model=MODELS),
    output:
        report(
            "results/tables/imagenet_c_accuracy.csv",
            caption="../report/imagenet_c_accuracy.rst",
            category="Tables",
            labels={"table": "ImageNet-C accuracy"},
        ),
    log:
        "results/logs/imagenet_c_accuracy/imagenet_c_accuracy.log",
    benchmark:
        "results/benchmarks/imagenet_c_accuracy/imagenet_c_accuracy.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        dataset_label_space=config["dataset"]["label_space"],
    script:
        "../workflow/scripts/imagenet_c_accuracy.py"


rule paper_tables:
    input:
        metrics="results/tables/vcr_metrics.csv",
        coverage="results/tables/coverage.csv",
    output:
        coverage=report(
            f"{PAPER_TABLES}/table2_coverage.csv",
            caption="../report/table2_coverage.rst",
            category="Tables",
            labels={"table": "Table 2: Δv coverage"},
        ),
        coverage_other=multiext(f"{PAPER_TABLES}/table2_coverage", ".md", ".tex"),
        metrics=report(
            f"{PAPER_TABLES}/metrics.csv",
            caption="../report/metrics_intervals.rst",
            category="Tables",
            labels={"table": "metrics with intervals"},
        ),
        metrics_other=multiext(f"{PAPER_TABLES}/metrics", ".md", ".tex"),
        leaderboards=[
            report(
                f"{PAPER_TABLES}/leaderboard/{corruption}.csv",
                caption="../report/leaderboard.rst",
                category="Leaderboards",
                subcategory=corruption,
                labels={"corruption": corruption, "table": "leaderboard"},
            )
            for corruption in CORRUPTIONS
        ],
        leaderboards_other=expand(
            "{root}/leaderboard/{corruption}.{ext}",
            root=PAPER_TABLES,
            corruption=CORRUPTIONS,
            ext=["md", "tex"],
        ),
    log:
        "results/logs/paper_tables/paper_tables.log",
    benchmark:
        "results/benchmarks/paper_tables/paper_tables.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        corruptions=CORRUPTIONS,
        families=FAMILIES,
        label_space=FIGURES["label_space"],
        dataset_label_space=config["dataset"]["label_space"],
        sort_by=FIGURES["leaderboard_sort"],
        digits=FIGURES["digits"],
    script:
        "../workflow/scripts/paper_tables.py"


rule retraining_table:
    input:
        metrics="results/tables/vcr_metrics.csv",
    output:
        report(
            f"{PAPER_TABLES}/table3_retraining.csv",
            caption="../report/table3_retraining.rst",
            category="Retraining",
            labels={"table": "Table 3: before and after retraining"},
        ),
        multiext(f"{PAPER_TABLES}/table3_retraining", ".md", ".tex"),
    log:
        "results/logs/retraining_table/retraining_table.log",
    benchmark:
        "results/benchmarks/retraining_table/retraining_table.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        pairs=RETRAINED_PAIRS,
        trained_on=RETRAINED_ON,
        corruptions=CORRUPTIONS,
        label_space=FIGURES["label_space"],
        dataset_label_space=config["dataset"]["label_space"],
        digits=FIGURES["digits"],
    script:
        "../workflow/scripts/retraining_table.py"


rule human_similarity:
    input:
        curves=expand("results/humans/{reference}/curves.parquet", reference=HUMAN_REFS),
        estimates=HUMAN_ESTIMATES,
    output:
        report(
            "results/tables/human_similarity.csv",
            caption="../report/human_similarity_table.rst",
            category="Humans",
            subcategory="Similarity of corruptions",
            labels={"table": "pairwise similarity tests"},
        ),
    log:
        "results/logs/human_similarity/human_similarity.log",
    benchmark:
        "results/benchmarks/human_similarity/human_similarity.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        info=HUMAN_INFO,
        level=config["estimation"]["similarity_level"],
        band=config["estimation"]["similarity_band"],
    script:
        "../workflow/scripts/human_similarity.py"


# --------------------------------------------------------------------------- figures


rule plot_curves:
    input:
        curves=expand(
            "results/estimates/{model}/{{corruption}}/curves.parquet", model=MODELS
        ),
        reference=human_reference_files,
    output:
        report(
            "results/figures/curves/{corruption}.png",
            caption="../report/curves.rst",
            category="Models vs humans",
            subcategory="{corruption}",
            labels={"corruption": "{corruption}", "figure": "curves s_a, s_p"},
        ),
        expand("results/figures/curves/{{corruption}}.{ext}", ext=EXTRA_FORMATS),
    log:
        "results/logs/plot_curves/{corruption}.log",
    benchmark:
        "results/benchmarks/plot_curves/{corruption}.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        families=FAMILIES,
        style=FIGURES,
        dataset_label_space=config["dataset"]["label_space"],
        reference=human_reference,
    script:
        "../workflow/scripts/plot_curves.py"


rule plot_hmri_mrsi:
    input:
        metrics="results/tables/vcr_metrics.csv",
    output:
        report(
            "results/figures/hmri_mrsi/{corruption}.png",
            caption="../report/hmri_mrsi.rst",
            category="Models vs humans",
            subcategory="{corruption}",
            labels={"corruption": "{corruption}", "figure": "HMRI and MRSI"},
        ),
        expand("results/figures/hmri_mrsi/{{corruption}}.{ext}", ext=EXTRA_FORMATS),
    log:
        "results/logs/plot_hmri_mrsi/{corruption}.log",
    benchmark:
        "results/benchmarks/plot_hmri_mrsi/{corruption}.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        families=FAMILIES,
        style=FIGURES,
    script:
        "../workflow/scripts/plot_hmri_mrsi.py"


rule plot_dv_histograms:
    input:
        histograms="results/tables/dv_histograms.csv",
        coverage="results/tables/coverage.csv",
    output:
        report(
            "results/figures/dv_histograms/{corruption}.png",
            caption="../report/dv_histograms.rst",
            category="Test sets",
            subcategory="{corruption}",
            labels={"corruption": "{corruption}", "figure": "Δv histograms"},
        ),
        expand("results/figures/dv_histograms/{{corruption}}.{ext}", ext=EXTRA_FORMATS),
    log:
        "results/logs/plot_dv_histograms/{corruption}.log",
    benchmark:
        "results/benchmarks/plot_dv_histograms/{corruption}.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        style=FIGURES,
    script:
        "../workflow/scripts/plot_dv_histograms.py"


rule plot_imagenet_c_vs_vcr:
    input:
        imagenet_c="results/tables/imagenet_c_accuracy.csv",
        metrics="results/tables/vcr_metrics.csv",
    output:
        report(
            "results/figures/imagenet_c_vs_vcr/{corruption}.png",
            caption="../report/imagenet_c_vs_vcr.rst",
            category="ImageNet-C vs VCR",
            subcategory="{corruption}",
            labels={
                "corruption": "{corruption}",
                "figure": "ImageNet-C accuracy vs R̂",
            },
        ),
        expand(
            "results/figures/imagenet_c_vs_vcr/{{corruption}}.{ext}", ext=EXTRA_FORMATS
        ),
    log:
        "results/logs/plot_imagenet_c_vs_vcr/{corruption}.log",
    benchmark:
        "results/benchmarks/plot_imagenet_c_vs_vcr/{corruption}.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        families=FAMILIES,
        style=FIGURES,
        dataset_label_space=config["dataset"]["label_space"],
    script:
        "../workflow/scripts/plot_imagenet_c_vs_vcr.py"


rule plot_human_similarity:
    input:
        curves=expand("results/humans/{reference}/curves.parquet", reference=HUMAN_REFS),
        estimates=HUMAN_ESTIMATES,
    output:
        report(
            "results/figures/humans/similarity.png",
            caption="../report/human_similarity.rst",
            category="Humans",
            subcategory="Similarity of corruptions",
            labels={"figure": "human curves, similar and dissimilar corruptions"},
        ),
        expand("results/figures/humans/similarity.{ext}", ext=EXTRA_FORMATS),
    log:
        "results/logs/plot_human_similarity/plot_human_similarity.log",
    benchmark:
        "results/benchmarks/plot_human_similarity/plot_human_similarity.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        info=HUMAN_INFO,
        level=config["estimation"]["similarity_level"],
        band=config["estimation"]["similarity_band"],
        style=FIGURES,
    script:
        "../workflow/scripts/plot_human_similarity.py"


# --------------------------------------------------------------------------- target


rule paper_figures:
    input:
        figure_outputs(),
