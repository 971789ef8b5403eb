"""Table 2, the metrics table with intervals and one leaderboard per corruption (CSV, MD, TeX)."""

from pathlib import Path

import pandas as pd

from vcrbench import tables
from vcrbench.plan import job

with job.run(snakemake):
    p = snakemake.params
    built = tables.paper_tables(
        pd.read_csv(snakemake.input.metrics),
        pd.read_csv(snakemake.input.coverage),
        p.corruptions,
        families=p.families,
        label_space=tables.resolve_label_space(p.label_space, p.dataset_label_space),
        sort_by=p.sort_by,
        digits=p.digits,
        differences=pd.read_csv(snakemake.input.differences),
    )
    root = Path(snakemake.output.coverage).parent  # results/tables/paper
    tables.write_tables(built, list(snakemake.output), root=root)
