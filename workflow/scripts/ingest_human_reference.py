"""Trials of one human reference, validated against the human-results schema."""

from vcrbench.humans import stages
from vcrbench.plan import job

with job.run(snakemake):
    stages.ingest_reference(
        snakemake.wildcards.reference, snakemake.params.entry, snakemake.output[0]
    )
