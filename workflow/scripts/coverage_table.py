"""Table 2 (coverage of dv, VCR vs ImageNet-C) and the dv histograms behind Fig. 4/11."""

from vcrbench.files import io
from vcrbench.plan import job, paths
from vcrbench.settings import CoverageSettings
from vcrbench.testsets import coverage

with job.run(snakemake):
    settings = CoverageSettings.of_config(snakemake.params.coverage)
    vcr = paths.group(paths.SHARD, snakemake.input.shards, "corruption")
    imagenet_c = paths.group(paths.IMAGENET_C_SHARD, snakemake.input.imagenet_c, "corruption")
    uniform = paths.index(paths.MANIFEST, snakemake.input.manifests, "corruption")
    table = coverage.coverage_table(vcr, imagenet_c, settings, uniform_draws=uniform)
    io.write_csv(table, snakemake.output.csv)
    histograms = coverage.dv_histograms(vcr, imagenet_c, settings, uniform_draws=uniform)
    io.write_csv(histograms, snakemake.output.histograms)
