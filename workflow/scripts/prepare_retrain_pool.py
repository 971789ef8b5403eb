"""Prepare the retraining pool's labelled images exactly as the evaluation clean set."""

from vcrbench.plan import job
from vcrbench.retrain.pool import prepare_pool

with job.run(snakemake):
    prepare_pool(
        snakemake.params.pool,
        images_path=snakemake.output.images,
        index_path=snakemake.output.index,
        threads=snakemake.threads,
    )
