"""Stop the workflow if any retraining-pool image is an evaluation image (pixel for pixel)."""

from vcrbench import logs
from vcrbench.retrain.pool import check_disjoint

with logs.job_log(snakemake.log[0]):
    check_disjoint(
        snakemake.input.pool_images,
        snakemake.input.pool_index,
        snakemake.input.images,
        snakemake.input.index,
        snakemake.output[0],
    )
