"""Per-class accuracy along dv and the class-transition table (datasets with their own classes)."""

from vcrbench import zeroshot
from vcrbench.plan import job, paths

with job.run(snakemake):
    files: dict = {}
    for path in snakemake.input.predictions:
        w = paths.parse(paths.PREDICTIONS_GROUP, path)
        files.setdefault((w["model"], w["corruption"]), []).append(path)
    clean = {paths.parse(paths.PREDICTIONS_CLEAN, p)["model"]: p for p in snakemake.input.clean}
    zeroshot.write_zero_shot_tables(
        files,
        clean,
        snakemake.output.classes,
        snakemake.output.transitions,
        **snakemake.params.settings,
        n_bins=snakemake.params.n_bins,
    )
