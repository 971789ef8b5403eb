"""Δv histograms of one corruption, ImageNet-C against the VCR test set (Fig. 4/11)."""

from vcrbench import logs
from vcrbench.figures import build

with logs.job_log(snakemake.log[0]):
    build.plot_dv_histograms(
        snakemake.input.histograms,
        list(snakemake.output),
        corruption=snakemake.wildcards.corruption,
        coverage_csv=snakemake.input.coverage,
        style=snakemake.params.style,
    )
