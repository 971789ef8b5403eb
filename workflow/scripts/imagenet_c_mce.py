"""ImageNet-C's CE, relative CE and mCE of every model (AlexNet-normalised), per corruption and
category."""

from vcrbench.plan import job, paths
from vcrbench.tables import corruption_error

with job.run(snakemake):
    predictions = paths.group(paths.PREDICTIONS_IMAGENET_C, snakemake.input.predictions, "model")
    clean = paths.index(paths.PREDICTIONS_CLEAN, snakemake.input.clean, "model")
    corruption_error.write_mce_table(
        snakemake.input.accuracy, predictions, clean, snakemake.output[0]
    )
