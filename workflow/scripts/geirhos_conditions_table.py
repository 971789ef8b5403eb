"""Per-condition accuracies of every Geirhos et al. (2018) experiment (shipped data, no inputs)."""

from vcrbench import logs
from vcrbench.humans.geirhos import stages
from vcrbench.plan import job

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    stages.conditions_table(snakemake.output[0])
