"""The screening experiment ("same corruption or not?"): a binomial test per pair of corruptions."""

from vcrbench import corruptions, logs
from vcrbench.humans import screening

with logs.job_log(snakemake.log[0]):
    screening.screening(
        snakemake.input[0],
        snakemake.output[0],
        known=set(corruptions.list_corruptions()) | set(snakemake.params.configured),
        alpha=snakemake.params.alpha,
    )
