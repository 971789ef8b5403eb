"""HMRI/MRSI of Geirhos et al.'s networks against Geirhos et al.'s humans (no GPU needed).

Rule ``geirhos_dnn_table``: the ImageNet networks on every experiment; rule
``geirhos_trained_table``: the networks trained on distortions, train x test.
"""

from pathlib import Path

from vcrbench import logs
from vcrbench.humans import stages
from vcrbench.plan import job

TABLES = {
    "geirhos_dnn_table": stages.geirhos_dnn_table,
    "geirhos_trained_table": stages.geirhos_trained,
}

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    p = snakemake.params
    refs = list(p.references)
    TABLES[snakemake.rule](
        p.references,
        dict(zip(refs, snakemake.input.conditions, strict=True)),
        {r: Path(c).parent for r, c in zip(refs, snakemake.input.curves, strict=True)},
        snakemake.output[0],
        settings=p.settings,
        seed=p.seed,
        anchor=p.anchor,
        placement=p.placement,
        metric_range=p.metric_range,
    )
