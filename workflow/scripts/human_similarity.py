"""Pairwise similarity tests of the human references (the paper's 83% band overlap)."""

from pathlib import Path

from vcrbench.figures import build
from vcrbench.plan import job, paths

with job.run(snakemake):
    curves = paths.index(paths.HUMAN_CURVES, snakemake.input.curves, "reference")
    dirs = {reference: Path(p).parent for reference, p in curves.items()}
    build.write_similarity_table(
        dirs,
        snakemake.output[0],
        info=snakemake.params.info,
        level=snakemake.params.level,
        band=snakemake.params.band,
        classes_csv=snakemake.output.classes,
    )
