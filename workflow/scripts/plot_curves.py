"""Estimated curves s_a and s_p of every model on one corruption, with the human curve
(Fig. 6/7)."""

from vcrbench.figures import build
from vcrbench.plan import job

with job.run(snakemake):
    ref = snakemake.params.reference
    build.plot_curves(
        list(snakemake.input.curves),
        list(snakemake.output),
        corruption=snakemake.wildcards.corruption,
        families=snakemake.params.families,
        style=snakemake.params.style,
        dataset_label_space=snakemake.params.dataset_label_space,
        reference_dir=ref["dir"],
        reference_name=ref["name"],
    )
