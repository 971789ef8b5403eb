"""Corrupt one shard's samples, measure dv on the exact pixels, write the shard."""

from vcrbench import logs
from vcrbench.corruptions import get_corruption
from vcrbench.datasets.loading import CleanSet
from vcrbench.files import io
from vcrbench.plan import job
from vcrbench.testsets import testset

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    corruption = get_corruption(snakemake.wildcards.corruption, snakemake.params.corruption)
    testset.generate_shard(
        io.read_parquet(snakemake.input.manifest),
        shard=int(snakemake.wildcards.shard),
        clean_set=CleanSet.open(snakemake.input.images, snakemake.input.index),
        corruption=corruption,
        out_path=snakemake.output[0],
        vif_settings=job.vif_settings(snakemake),
    )
