"""One shard of a corruption's ImageNet-C comparison set (the same images at the five
severities)."""

from vcrbench import logs
from vcrbench.corruptions import get_corruption
from vcrbench.datasets.loading import CleanSet
from vcrbench.plan import job
from vcrbench.testsets import testset

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    p = snakemake.params
    testset.generate_imagenet_c_shard(
        get_corruption(snakemake.wildcards.corruption, p.corruption),
        CleanSet.open(snakemake.input.images, snakemake.input.index),
        shard=int(snakemake.wildcards.shard),
        shard_size=p.shard_size,
        n_shards=p.n_shards,
        out_path=snakemake.output[0],
        vif_settings=job.vif_settings(snakemake),
        seed=p.seed,
        n_images=p.n_images,
    )
