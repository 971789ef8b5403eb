"""Error consistency (Cohen's kappa) of Geirhos et al.'s networks with the humans, per condition."""

from vcrbench.humans import stages
from vcrbench.plan import job

with job.run(snakemake):
    p = snakemake.params
    stages.geirhos_consistency(
        p.references,
        dict(zip(list(p.references), snakemake.input.conditions, strict=True)),
        snakemake.output[0],
        n_bins=p.n_bins,
    )
