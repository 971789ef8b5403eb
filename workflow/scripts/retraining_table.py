"""Table 3: VCR before and after retraining (CSV, MD, TeX)."""

import pandas as pd

from vcrbench import tables
from vcrbench.plan import job
from vcrbench.settings import TableSettings

with job.run(snakemake):
    p = snakemake.params
    table = tables.retraining_table(
        pd.read_csv(snakemake.input.metrics),
        p.pairs,
        TableSettings(digits=p.digits, label_space=p.label_space),
        dataset_label_space=p.dataset_label_space,
        trained_on=p.trained_on,
        corruptions=p.corruptions,
        differences=pd.read_csv(snakemake.input.differences),
    )
    tables.write_table(table, list(snakemake.output))
