"""Prepare the retraining pool's labelled images exactly as the evaluation clean set."""

from vcrbench import logs
from vcrbench.retrain.pool import prepare_pool

with logs.job_log(snakemake.log[0]):
    prepare_pool(
        snakemake.params.pool,
        images_path=snakemake.output.images,
        index_path=snakemake.output.index,
        threads=snakemake.threads,
    )
