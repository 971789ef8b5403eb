"""Curves, R_a/R_p and HMRI/MRSI of one model on one corruption."""

from pathlib import Path

from vcrbench import logs, schema
from vcrbench.evaluation import evaluate
from vcrbench.plan import job

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    p = snakemake.params
    ref = p.reference
    # At its default the plan leaves estimation.short_label_space out of the params
    # (vcrbench.plan.config.PARAMS_WHEN_SET): the schema's default then.
    short = p.settings.get("short_label_space", schema.default_of("estimation.short_label_space"))
    evaluate.evaluate(
        list(snakemake.input.predictions),
        snakemake.input.clean,
        Path(snakemake.output.metrics).parent,
        model=snakemake.wildcards.model,
        corruption=snakemake.wildcards.corruption,
        settings=p.settings,
        seed=p.seed,
        dataset_label_space=p.dataset_label_space,
        label_spaces=p.settings["label_spaces"],
        reference=ref["name"],
        reference_how=ref["how"],
        reference_dir=ref["dir"],
        scenario_level=p.scenario_level,
        zero_shot=p.zero_shot,
        short_label_space=short,
    )
