"""Heat map of Geirhos et al.'s trained networks against the humans (train x test)."""

from vcrbench import logs
from vcrbench.figures import build

with logs.job_log(snakemake.log[0]):
    build.plot_geirhos_trained(
        snakemake.input[0], list(snakemake.output), style=snakemake.params.style
    )
