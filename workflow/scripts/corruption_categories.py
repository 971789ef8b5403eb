"""Means by corruption category of the ImageNet-C accuracy and of the VCR metrics, with Yucel et
al.'s ratios of reduction (per cent of the clean accuracy on the ImageNet-C images)."""

from vcrbench.plan import job, paths
from vcrbench.tables import corruption_error

with job.run(snakemake):
    imagenet_c = snakemake.input.imagenet_c[0] if snakemake.input.imagenet_c else None
    clean_accuracy = None
    if imagenet_c is not None:
        clean_accuracy = corruption_error.clean_accuracies(
            paths.group(paths.PREDICTIONS_IMAGENET_C, snakemake.input.predictions, "model"),
            paths.index(paths.PREDICTIONS_CLEAN, snakemake.input.clean, "model"),
            snakemake.params.dataset_label_space,
        )
    corruption_error.write_category_table(
        snakemake.input.metrics,
        imagenet_c,
        snakemake.output[0],
        clean_accuracy,
        dict(snakemake.params.defense_pairs),
    )
