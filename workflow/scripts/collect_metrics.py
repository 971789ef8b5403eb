"""The metrics table: one row per model, corruption and label space."""

from vcrbench import evaluate, logs

with logs.job_log(snakemake.log[0]):
    evaluate.collect_metrics(list(snakemake.input), snakemake.output[0])
