"""The metrics table: one row per model, corruption and label space."""

from vcrbench.evaluation import evaluate
from vcrbench.plan import job

with job.run(snakemake):
    evaluate.collect_metrics(list(snakemake.input), snakemake.output[0])
