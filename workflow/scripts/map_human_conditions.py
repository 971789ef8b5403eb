"""The dv distribution of each fixed condition of a human reference, on this dataset's images."""

from vcrbench import logs
from vcrbench.humans import stages
from vcrbench.plan import job
from vcrbench.settings import HumanMappingSettings

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    p = snakemake.params
    stages.map_conditions(
        snakemake.input.trials,
        snakemake.input.images,
        snakemake.input.index,
        snakemake.output[0],
        reference_name=snakemake.wildcards.reference,
        seed=p.seed,
        settings=HumanMappingSettings.of_config(p.mapping),
        vif_settings=job.vif_settings(snakemake),
        corruptions_config=p.corruptions,
    )
