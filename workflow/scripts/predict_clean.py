"""One model's predictions on the clean images (the anchor of accuracy and consistency)."""

from vcrbench import inference, logs
from vcrbench.datasets import CleanSet
from vcrbench.models import ModelSpec

with logs.job_log(snakemake.log[0]):
    logs.set_threads(snakemake.threads)
    inf = snakemake.params.inference
    inference.predict_clean(
        ModelSpec.from_config(snakemake.wildcards.model, snakemake.params.model),
        CleanSet.open(snakemake.input.images, snakemake.input.index),
        snakemake.output[0],
        batch_size=inf["batch_size"],
        device=inf["device"],
        num_workers=inf["num_workers"],
        precision=inf["precision"],
        label_space=snakemake.params.label_space,
    )
