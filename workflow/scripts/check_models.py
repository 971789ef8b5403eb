"""Check every model entry (id in its source, weights, head) before any job does work."""

from vcrbench import io
from vcrbench.models.checks import check_models
from vcrbench.plan import job

with job.run(snakemake):
    io.write_json(check_models(snakemake.params.models), snakemake.output[0])
