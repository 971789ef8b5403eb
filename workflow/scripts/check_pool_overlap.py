"""Stop the workflow if any retraining-pool image is an evaluation image (pixel for pixel)."""

from vcrbench.plan import job
from vcrbench.retrain.pool import check_disjoint

with job.run(snakemake):
    check_disjoint(
        snakemake.input.pool_images,
        snakemake.input.pool_index,
        snakemake.input.images,
        snakemake.input.index,
        snakemake.output[0],
    )
