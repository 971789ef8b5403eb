"""results/tables/definitions.csv: this run's choices beside the paper's, from the config alone."""

import pandas as pd

from vcrbench.files import io
from vcrbench.plan import definitions, job

with job.run(snakemake):
    table = pd.DataFrame(snakemake.params.rows, columns=definitions.COLUMNS)
    io.write_csv(table, snakemake.output[0])
