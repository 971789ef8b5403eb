"""Human curves of similar and dissimilar corruptions with their similarity bands (Fig. 8/12)."""

from pathlib import Path

from vcrbench.figures import build
from vcrbench.plan import job, paths

with job.run(snakemake):
    curves = paths.index(paths.HUMAN_CURVES, snakemake.input.curves, "reference")
    dirs = {reference: Path(p).parent for reference, p in curves.items()}
    build.plot_human_similarity(
        dirs,
        list(snakemake.output),
        info=snakemake.params.info,
        level=snakemake.params.level,
        band=snakemake.params.band,
        style=snakemake.params.style,
    )
