"""HMRI/MRSI of Geirhos et al.'s networks against their humans, every experiment (a figure)."""

from vcrbench import logs
from vcrbench.figures import build

with logs.job_log(snakemake.log[0]):
    build.plot_geirhos_dnn(snakemake.input[0], list(snakemake.output), style=snakemake.params.style)
