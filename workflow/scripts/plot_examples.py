"""One clean image at increasing Δv, from one corruption's shards (Fig. 3/10)."""

from vcrbench.figures import build
from vcrbench.plan import job

with job.run(snakemake):
    build.plot_examples(
        list(snakemake.input.shards),
        snakemake.input.clean_images,
        snakemake.input.clean_index,
        list(snakemake.output),
        corruption=snakemake.wildcards.corruption,
        n_bins=snakemake.params.n_bins,
        style=snakemake.params.style,
    )
