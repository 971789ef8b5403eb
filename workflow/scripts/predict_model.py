"""One model's predictions on the clean images, every test set and every ImageNet-C set, the model
loaded once (rule predict_model: a model whose images are few)."""

from vcrbench import inference, logs
from vcrbench.datasets.loading import CleanSet
from vcrbench.models import ModelSpec
from vcrbench.plan import job

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    clean_out, *set_outs = snakemake.output
    inference.predict_model(
        ModelSpec.from_config(snakemake.wildcards.model, snakemake.params.model),
        CleanSet.open(snakemake.input.images, snakemake.input.index),
        clean_out,
        [(out, snakemake.input[f"shards_{i}"]) for i, out in enumerate(set_outs, start=1)],
        job.predict_options(snakemake),
    )
