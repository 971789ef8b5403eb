"""Error consistency (Cohen's kappa) of every pair of models on the same test samples, per bin."""

from vcrbench.evaluation import consistency
from vcrbench.plan import job, paths

with job.run(snakemake):
    files: dict = {}  # corruption -> model -> its groups' files, in order
    for (corruption, model), group in paths.group(
        paths.PREDICTIONS_GROUP, snakemake.input, "corruption", "model"
    ).items():
        files.setdefault(corruption, {})[model] = group
    p = snakemake.params
    consistency.write_consistency_table(
        files,
        snakemake.output[0],
        n_bins=p.n_bins,
        label_spaces=p.label_spaces,
        dataset_label_space=p.dataset_label_space,
    )
