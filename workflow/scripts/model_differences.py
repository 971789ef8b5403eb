"""Paired differences of every two models on each corruption and label space (with Holm)."""

from vcrbench import differences, logs

with logs.job_log(snakemake.log[0]):
    differences.model_differences(
        list(snakemake.input), snakemake.output[0], relations=snakemake.params.relations
    )
