"""Paired differences of every two models on each corruption and label space (with Holm)."""

from vcrbench.evaluation import differences
from vcrbench.plan import job

with job.run(snakemake):
    differences.model_differences(
        list(snakemake.input), snakemake.output[0], relations=snakemake.params.relations
    )
