"""The defenses figure: relative change of accuracy and ΔR̂_a per corruption, with intervals."""

from vcrbench.figures import build
from vcrbench.plan import job

with job.run(snakemake):
    build.plot_defenses(snakemake.input[0], list(snakemake.output), style=snakemake.params.style)
