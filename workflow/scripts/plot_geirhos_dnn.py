"""Figures of Geirhos et al.'s networks against their humans: HMRI/MRSI per experiment (rule
``plot_geirhos_dnn``), error consistency against Δv (``plot_geirhos_consistency``), the trained
networks' heat map (``plot_geirhos_trained``); and the models' error consistency with each other
(``plot_model_consistency``)."""

from vcrbench.figures import build
from vcrbench.plan import job

PLOTS = {
    "plot_geirhos_dnn": build.plot_geirhos_dnn,
    "plot_geirhos_consistency": build.plot_geirhos_consistency,
    "plot_geirhos_trained": build.plot_geirhos_trained,
    "plot_model_consistency": build.plot_model_consistency,
}

with job.run(snakemake):
    PLOTS[snakemake.rule](snakemake.input[0], list(snakemake.output), style=snakemake.params.style)
