"""The same images at ImageNet-C's five fixed severities, with dv (the comparison set)."""

from vcrbench import logs, testset
from vcrbench.corruptions import get_corruption
from vcrbench.datasets import CleanSet
from vcrbench.plan import job

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    p = snakemake.params
    testset.generate_imagenet_c(
        get_corruption(snakemake.wildcards.corruption, p.corruption),
        CleanSet.open(snakemake.input.images, snakemake.input.index),
        out_path=snakemake.output[0],
        vif_variant=p.vif_variant,
        seed=p.seed,
        n_images=p.n_images,
    )
