"""Error consistency (Cohen's kappa) of Geirhos et al.'s networks with the humans, per condition."""

from vcrbench.humans.geirhos import stages
from vcrbench.plan import humans, job

with job.run(snakemake):
    p = snakemake.params
    stages.error_consistency_table(
        humans.references_of(p.references),
        dict(zip(list(p.references), snakemake.input.conditions, strict=True)),
        snakemake.output[0],
        n_bins=p.n_bins,
    )
