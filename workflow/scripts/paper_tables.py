"""Table 2, the metrics table with intervals and one leaderboard per corruption (CSV, MD, TeX)."""

from pathlib import Path

import pandas as pd

from vcrbench import tables
from vcrbench.plan import job
from vcrbench.settings import TableSettings

with job.run(snakemake):
    p = snakemake.params
    settings = TableSettings(p.digits, p.label_space, p.sort_by)
    built = tables.paper_tables(
        pd.read_csv(snakemake.input.metrics),
        pd.read_csv(snakemake.input.coverage),
        p.corruptions,
        settings,
        dataset_label_space=p.dataset_label_space,
        families=p.families,
        differences=pd.read_csv(snakemake.input.differences),
    )
    root = Path(snakemake.output.coverage).parent  # results/tables/paper
    tables.write_tables(built, list(snakemake.output), root=root)
