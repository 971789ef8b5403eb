"""Accuracy and consistency of every model on the ImageNet-C sets (per severity and mean); for the
rule imagenet_c_clean_correct, on the images each model classifies correctly when clean."""

from vcrbench.evaluation import evaluate
from vcrbench.files import io
from vcrbench.plan import job, paths
from vcrbench.tables import restricted

with job.run(snakemake):
    # (model, corruption) -> its groups' files, in order
    predictions = paths.group(
        paths.PREDICTIONS_IMAGENET_C, snakemake.input.predictions, "model", "corruption"
    )
    clean = paths.index(paths.PREDICTIONS_CLEAN, snakemake.input.clean, "model")
    accuracy = (
        restricted.imagenet_c_clean_correct
        if snakemake.rule == "imagenet_c_clean_correct"
        else evaluate.imagenet_c_accuracy
    )
    table = accuracy(
        predictions,
        clean,
        dataset_label_space=snakemake.params.dataset_label_space,
        label_spaces=evaluate.IMAGENET_C_LABEL_SPACES,
    )
    io.write_csv(table, snakemake.output[0])
