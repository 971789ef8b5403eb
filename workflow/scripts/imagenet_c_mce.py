"""ImageNet-C's CE, relative CE and mCE of every model (AlexNet-normalised), per corruption and
category."""

from collections import defaultdict

from vcrbench.plan import job, paths
from vcrbench.tables import corruption_error

with job.run(snakemake):
    predictions = defaultdict(list)  # model -> its ImageNet-C prediction files
    for path in snakemake.input.predictions:
        predictions[paths.parse(paths.PREDICTIONS_IMAGENET_C, path)["model"]].append(path)
    clean = {paths.parse(paths.PREDICTIONS_CLEAN, p)["model"]: p for p in snakemake.input.clean}
    corruption_error.write_mce_table(
        snakemake.input.accuracy, predictions, clean, snakemake.output[0]
    )
