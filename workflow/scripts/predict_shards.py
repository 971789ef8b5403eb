"""One model's predictions on a group of test-set shards (or an ImageNet-C set)."""

from vcrbench import inference, logs
from vcrbench.models import ModelSpec
from vcrbench.plan import job

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    inference.predict_shards(
        ModelSpec.from_config(snakemake.wildcards.model, snakemake.params.model),
        list(snakemake.input.shards),
        snakemake.output[0],
        job.predict_options(snakemake),
    )
