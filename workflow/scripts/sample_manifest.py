"""Draw the samples (image, parameters, seed) of one corruption's test set."""

from vcrbench import logs
from vcrbench.corruptions import get_corruption
from vcrbench.datasets.loading import CleanSet
from vcrbench.files import io
from vcrbench.plan import job
from vcrbench.testsets import sampling

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    p = snakemake.params
    corruption = get_corruption(snakemake.wildcards.corruption, p.corruption)
    clean = CleanSet.open(snakemake.input.images, snakemake.input.index)
    manifest = sampling.make_manifest(
        corruption,
        clean,
        n_samples=p.n_samples,
        shard_size=p.shard_size,
        seed=p.seed,
        mode=p.mode,
        vif_settings=job.vif_settings(snakemake),
        **p.options,
    )
    io.write_parquet(manifest, snakemake.output[0])
