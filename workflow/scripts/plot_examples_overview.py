"""Every corruption of the run as a row, one clean image at increasing Δv, from the shards
(Fig. 3)."""

from pathlib import Path

from vcrbench.figures import build
from vcrbench.plan import job

with job.run(snakemake):
    shards = {}  # testsets/{corruption}/shard-*.parquet, in the run's order
    for path in snakemake.input.shards:
        shards.setdefault(Path(path).parent.name, []).append(path)
    build.plot_examples_overview(
        shards,
        snakemake.input.clean_images,
        snakemake.input.clean_index,
        list(snakemake.output),
        n_bins=snakemake.params.n_bins,
        style=snakemake.params.style,
    )
