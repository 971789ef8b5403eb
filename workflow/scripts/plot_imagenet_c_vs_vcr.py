"""ImageNet-C accuracy against R̂_a and R̂_p, one point per model (Fig. 5)."""

from vcrbench.figures import build
from vcrbench.plan import job

with job.run(snakemake):
    build.plot_imagenet_c_vs_vcr(
        snakemake.input.imagenet_c,
        snakemake.input.metrics,
        list(snakemake.output),
        corruption=snakemake.wildcards.corruption,
        families=snakemake.params.families,
        style=snakemake.params.style,
        dataset_label_space=snakemake.params.dataset_label_space,
    )
