"""Table 1: the models of the run, from their clean predictions (CSV, MD, TeX)."""

from pathlib import Path

from vcrbench import tables
from vcrbench.plan import job
from vcrbench.settings import TableSettings

with job.run(snakemake):
    clean = {Path(p).parent.name: p for p in snakemake.input.clean}  # predictions/{model}/clean
    settings = TableSettings(digits=snakemake.params.digits)
    table = tables.table1_models(snakemake.params.models, clean, settings)
    tables.write_table(table, list(snakemake.output))
