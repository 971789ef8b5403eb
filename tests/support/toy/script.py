"""The toy figure's script: thin, as every workflow script."""

from tests.support.toy.figure import plot_labels
from vcrbench.plan import job

with job.run(snakemake):  # noqa: F821 (given by Snakemake)
    plot_labels(snakemake.input.index, list(snakemake.output), style=snakemake.params.style)  # noqa: F821
