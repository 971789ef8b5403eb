"""The screening experiment ("same corruption or not?"): a binomial test per pair of corruptions."""

from vcrbench import corruptions
from vcrbench.humans import screening
from vcrbench.plan import job

with job.run(snakemake):
    screening.screening(
        snakemake.input[0],
        snakemake.output[0],
        known=set(corruptions.list_corruptions()) | set(snakemake.params.configured),
        alpha=snakemake.params.alpha,
    )
