"""One model's predictions on the clean images (the anchor of accuracy and consistency)."""

from vcrbench import inference, logs
from vcrbench.datasets.loading import CleanSet
from vcrbench.models import ModelSpec
from vcrbench.plan import job

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    inference.predict_clean(
        ModelSpec.from_config(snakemake.wildcards.model, snakemake.params.model),
        CleanSet.open(snakemake.input.images, snakemake.input.index),
        snakemake.output[0],
        job.predict_options(snakemake),
    )
