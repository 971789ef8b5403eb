"""Per-class mean accuracy on unseen classes with the decision restricted to them (from the saved
log-probabilities)."""

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
        restricted.unseen_only,
        [(m, c, f) for (m, c), f in files.items()],
        clean,
        snakemake.output.table,
        snakemake.output.curves,
        unseen=restricted.unseen_classes(p.zero_shot),
        settings=p.settings,
        seed=p.seed,
        dataset_label_space=p.dataset_label_space,
    )
