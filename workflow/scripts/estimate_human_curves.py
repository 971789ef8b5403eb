"""Human curves of one reference, from the models' estimator."""

from pathlib import Path

from vcrbench import logs
from vcrbench.humans import stages
from vcrbench.humans.curves import HumanFit
from vcrbench.plan import humans, job

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    p = snakemake.params
    stages.estimate_reference(
        snakemake.input.trials,
        snakemake.input.conditions,
        Path(snakemake.output[0]).parent,
        reference=humans.reference_of(snakemake.wildcards.reference, p.entry),
        fit=HumanFit(p.settings, p.anchor, p.placement),
        seed=p.seed,
    )
