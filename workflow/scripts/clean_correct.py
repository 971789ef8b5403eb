"""Curves and R-hat on the samples whose clean image each model classifies correctly."""

from vcrbench import logs
from vcrbench.plan import job, paths
from vcrbench.tables import restricted

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    p = snakemake.params
    files: dict = {}
    for path in snakemake.input.predictions:
        w = paths.parse(paths.PREDICTIONS_GROUP, path)
        files.setdefault((w["model"], w["corruption"]), []).append(path)
    clean = {paths.parse(paths.PREDICTIONS_CLEAN, f)["model"]: f for f in snakemake.input.clean}
    restricted.write_restricted_tables(
        restricted.clean_correct_job,
        [(m, c, f) for (m, c), f in files.items()],
        clean,
        snakemake.output.table,
        snakemake.output.curves,
        settings=p.settings,
        seed=p.seed,
        dataset_label_space=p.dataset_label_space,
        label_spaces=p.settings["label_spaces"],
        zero_shot=p.zero_shot,
    )
