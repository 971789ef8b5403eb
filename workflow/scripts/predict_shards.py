"""One model's predictions on a group of test-set shards (or an ImageNet-C set)."""

from vcrbench import inference, logs
from vcrbench.models import ModelSpec

with logs.job_log(snakemake.log[0]):
    logs.set_threads(snakemake.threads)
    inf = snakemake.params.inference
    inference.predict_shards(
        ModelSpec.from_config(snakemake.wildcards.model, snakemake.params.model),
        list(snakemake.input.shards),
        snakemake.output[0],
        batch_size=inf["batch_size"],
        device=inf["device"],
        num_workers=inf["num_workers"],
        precision=inf["precision"],
        label_space=snakemake.params.label_space,
    )
