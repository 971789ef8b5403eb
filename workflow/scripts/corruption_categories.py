"""Means by corruption category of the ImageNet-C accuracy and of the VCR metrics, with Yucel et
al.'s ratios of reduction (per cent of the clean accuracy on the ImageNet-C images)."""

from collections import defaultdict

from vcrbench import io
from vcrbench.errors import TableError
from vcrbench.plan import job, paths
from vcrbench.tables import corruption_error

with job.run(snakemake):
    imagenet_c = snakemake.input.imagenet_c[0] if snakemake.input.imagenet_c else None
    clean_accuracy = {}
    if imagenet_c is not None:
        image_ids = defaultdict(list)  # model -> the images of its ImageNet-C sets
        for path in snakemake.input.predictions:
            model = paths.parse(paths.PREDICTIONS_IMAGENET_C, path)["model"]
            image_ids[model] += io.read_columns(path, ["image_id"])["image_id"].tolist()
        clean = {paths.parse(paths.PREDICTIONS_CLEAN, p)["model"]: p for p in snakemake.input.clean}
        space = snakemake.params.dataset_label_space
        for model, ids in image_ids.items():
            try:  # a model without labelled clean images has no ratio
                error = corruption_error.clean_errors(clean, {model: ids})[model]
            except TableError:
                continue
            clean_accuracy[(model, space)] = 1.0 - error
    corruption_error.write_category_table(
        snakemake.input.metrics,
        imagenet_c,
        snakemake.output[0],
        clean_accuracy,
        dict(snakemake.params.defense_pairs),
    )
