"""Per-class accuracy along dv and the class-transition table (datasets with their own classes)."""

from vcrbench.estimation import zeroshot
from vcrbench.plan import job, paths

with job.run(snakemake):
    files = paths.group(paths.PREDICTIONS_GROUP, snakemake.input.predictions, "model", "corruption")
    clean = paths.index(paths.PREDICTIONS_CLEAN, snakemake.input.clean, "model")
    zeroshot.write_zero_shot_tables(
        files,
        clean,
        snakemake.output.classes,
        snakemake.output.transitions,
        **snakemake.params.settings,
        n_bins=snakemake.params.n_bins,
    )
