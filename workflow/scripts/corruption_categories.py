"""Means by corruption category of the ImageNet-C accuracy and of the VCR metrics."""

from vcrbench.plan import job
from vcrbench.tables import corruption_error

with job.run(snakemake):
    imagenet_c = snakemake.input.imagenet_c[0] if snakemake.input.imagenet_c else None
    corruption_error.write_category_table(snakemake.input.metrics, imagenet_c, snakemake.output[0])
