"""What each defense changes: defended against undefended model, per corruption (defenses.csv)."""

from vcrbench.evaluation.defense_effects import defense_table
from vcrbench.plan import job

with job.run(snakemake):
    p = snakemake.params
    defense_table(
        p.pairs,
        p.predictions,
        p.clean,
        list(snakemake.input.replicates),
        snakemake.output[0],
        defenses=p.defenses,
        dataset_label_space=p.dataset_label_space,
        label_spaces=p.settings["label_spaces"],
        settings=p.settings,
        seed=p.seed,
    )
