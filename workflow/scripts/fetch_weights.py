"""One model's weights into the weights cache (a local rule: it runs where the network is)."""

import os

os.environ.update(snakemake.params.online)  # before any hub library reads it

from vcrbench.models import fetch  # noqa: E402
from vcrbench.plan import job  # noqa: E402

with job.run(snakemake):
    fetch.fetch_weights(
        snakemake.wildcards.model, snakemake.params.model, snakemake.params.cache, snakemake.output[0]
    )
