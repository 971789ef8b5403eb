"""Table 2 (coverage of dv, VCR vs ImageNet-C) and the dv histograms behind Fig. 4/11."""

from collections import defaultdict

from vcrbench import coverage, io
from vcrbench.plan import job, paths

with job.run(snakemake):
    cov = snakemake.params.coverage
    vcr = defaultdict(list)
    for path in snakemake.input.shards:
        vcr[paths.parse(paths.SHARD, path)["corruption"]].append(path)
    imagenet_c = defaultdict(list)
    for path in snakemake.input.imagenet_c:
        imagenet_c[paths.parse(paths.IMAGENET_C_SHARD, path)["corruption"]].append(path)
    table = coverage.coverage_table(
        vcr,
        imagenet_c,
        n_bins=cov["bins"],
        min_count=cov["min_count"],
        reference_n=cov["reference_n"],
        denominator=cov["denominator"],
    )
    io.write_csv(table, snakemake.output.csv)
    histograms = coverage.dv_histograms(vcr, imagenet_c, n_bins=cov["bins"])
    io.write_csv(histograms, snakemake.output.histograms)
