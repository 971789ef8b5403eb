"""Δv histograms of one corruption, ImageNet-C against the VCR test set (Fig. 4/11)."""

from vcrbench.figures import build
from vcrbench.plan import job

with job.run(snakemake):
    build.plot_dv_histograms(
        snakemake.input.histograms,
        list(snakemake.output),
        corruption=snakemake.wildcards.corruption,
        coverage_csv=snakemake.input.coverage,
        style=snakemake.params.style,
    )
