"""Trials of one human reference, validated against the human-results schema."""

from vcrbench import logs
from vcrbench.humans import stages

with logs.job_log(snakemake.log[0]):
    stages.ingest_reference(
        snakemake.wildcards.reference, snakemake.params.entry, snakemake.output[0]
    )
