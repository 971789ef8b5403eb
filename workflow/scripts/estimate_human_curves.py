"""Human curves of one reference, from the models' estimator."""

from pathlib import Path

from vcrbench import logs
from vcrbench.humans import stages
from vcrbench.plan import job

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    p = snakemake.params
    stages.estimate_reference(
        snakemake.input.trials,
        snakemake.input.conditions,
        Path(snakemake.output[0]).parent,
        reference_name=snakemake.wildcards.reference,
        settings=p.settings,
        seed=p.seed,
        anchor=p.anchor,
        placement=p.placement,
        ref_cfg=p.entry,
    )
