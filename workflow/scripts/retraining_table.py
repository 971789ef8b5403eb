"""Table 3: VCR before and after retraining (CSV, MD, TeX)."""

import pandas as pd

from vcrbench import tables
from vcrbench.plan import job

with job.run(snakemake):
    p = snakemake.params
    table = tables.retraining_table(
        pd.read_csv(snakemake.input.metrics),
        p.pairs,
        trained_on=p.trained_on,
        label_space=tables.resolve_label_space(p.label_space, p.dataset_label_space),
        corruptions=p.corruptions,
        digits=p.digits,
        differences=pd.read_csv(snakemake.input.differences),
    )
    tables.write_table(table, list(snakemake.output))
