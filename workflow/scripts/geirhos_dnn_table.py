"""HMRI/MRSI of Geirhos et al.'s networks against Geirhos et al.'s humans (no GPU needed).

Rule ``geirhos_dnn_table``: the ImageNet networks on every experiment; rule
``geirhos_trained_table``: the networks trained on distortions, train x test.
"""

from pathlib import Path

from vcrbench import logs
from vcrbench.humans.curves import HumanFit
from vcrbench.humans.geirhos import stages
from vcrbench.plan import humans, job

TABLES = {
    "geirhos_dnn_table": stages.dnn_table,
    "geirhos_trained_table": stages.trained_table,
}

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    p = snakemake.params
    refs = list(p.references)
    TABLES[snakemake.rule](
        humans.references_of(p.references),
        dict(zip(refs, snakemake.input.conditions, strict=True)),
        {r: Path(c).parent for r, c in zip(refs, snakemake.input.curves, strict=True)},
        snakemake.output[0],
        fit=HumanFit(p.settings, p.anchor, p.placement),
        seed=p.seed,
        metric_range=p.metric_range,
        scenario_level=p.scenario_level,
    )
