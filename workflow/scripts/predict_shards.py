"""One model's predictions on a group of test-set shards (or an ImageNet-C set)."""

from vcrbench import inference, logs
from vcrbench.models import ModelSpec
from vcrbench.plan import job

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    p = snakemake.params
    execution = snakemake.config["inference"]  # batch size, workers: not params (see the rule)
    inference.predict_shards(
        ModelSpec.from_config(snakemake.wildcards.model, snakemake.params.model),
        list(snakemake.input.shards),
        snakemake.output[0],
        batch_size=execution["batch_size"],
        device=p.device,
        num_workers=execution["num_workers"],
        precision=p.precision,
        label_space=p.label_space,
        save_logprobs=p.save_logprobs,
    )
