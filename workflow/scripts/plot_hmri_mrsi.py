"""HMRI and MRSI bars of every model on one corruption (Fig. 6/7)."""

from vcrbench.figures import build
from vcrbench.plan import job

with job.run(snakemake):
    build.plot_hmri_mrsi(
        snakemake.input.metrics,
        list(snakemake.output),
        corruption=snakemake.wildcards.corruption,
        families=snakemake.params.families,
        style=snakemake.params.style,
    )
