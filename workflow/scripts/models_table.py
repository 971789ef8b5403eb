"""Table 1: the models of the run, from their clean predictions (CSV, MD, TeX)."""

from pathlib import Path

from vcrbench import tables
from vcrbench.plan import job

with job.run(snakemake):
    clean = {Path(p).parent.name: p for p in snakemake.input.clean}  # predictions/{model}/clean
    table = tables.table1_models(snakemake.params.models, clean, snakemake.params.digits)
    tables.write_table(table, list(snakemake.output))
