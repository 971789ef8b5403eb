"""Trials of one human reference, validated against the human-results schema."""

from vcrbench.humans import stages
from vcrbench.plan import humans, job

with job.run(snakemake):
    reference = humans.reference_of(snakemake.wildcards.reference, snakemake.params.entry)
    stages.ingest_reference(reference, snakemake.output[0])
