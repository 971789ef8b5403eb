"""R-hat and curves of a restricted analysis (vcrbench.tables.restricted): ``clean_correct``
(samples of clean-correct images) or ``unseen_only`` (the decision over unseen classes only)."""

from vcrbench import logs
from vcrbench.plan import job, paths
from vcrbench.tables import restricted

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    p = snakemake.params
    files = paths.group(paths.PREDICTIONS_GROUP, snakemake.input.predictions, "model", "corruption")
    clean = paths.index(paths.PREDICTIONS_CLEAN, snakemake.input.clean, "model")
    common = {"settings": p.settings, "seed": p.seed, "dataset_label_space": p.dataset_label_space}
    if p.analysis == restricted.UNSEEN_ONLY:
        analysis = restricted.unseen_only
        common["unseen"] = restricted.unseen_classes(p.zero_shot)
    else:
        analysis = restricted.clean_correct_job
        common.update(label_spaces=p.settings["label_spaces"], zero_shot=p.zero_shot)
    restricted.write_restricted_tables(
        analysis,
        [(m, c, f) for (m, c), f in files.items()],
        clean,
        snakemake.output.table,
        snakemake.output.curves,
        **common,
    )
