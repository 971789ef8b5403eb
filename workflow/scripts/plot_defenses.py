"""The defenses figure: relative change of accuracy and ΔR̂_a per corruption, with intervals."""

from vcrbench import logs
from vcrbench.figures import build

with logs.job_log(snakemake.log[0]):
    build.plot_defenses(snakemake.input[0], list(snakemake.output), style=snakemake.params.style)
