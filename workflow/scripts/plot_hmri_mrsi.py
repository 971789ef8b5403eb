"""HMRI and MRSI bars of every model on one corruption (Fig. 6/7)."""

from vcrbench import logs
from vcrbench.figures import build

with logs.job_log(snakemake.log[0]):
    build.plot_hmri_mrsi(
        snakemake.input.metrics,
        list(snakemake.output),
        corruption=snakemake.wildcards.corruption,
        families=snakemake.params.families,
        style=snakemake.params.style,
    )
