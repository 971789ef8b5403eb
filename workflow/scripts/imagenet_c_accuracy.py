"""Accuracy and consistency of every model on the ImageNet-C sets (per severity and mean); for the
rule imagenet_c_clean_correct, on the images each model classifies correctly when clean."""

from collections import defaultdict

from vcrbench import evaluate, io
from vcrbench.plan import job, paths
from vcrbench.tables import restricted

with job.run(snakemake):
    predictions = defaultdict(list)  # (model, corruption) -> its groups' files, in order
    for path in snakemake.input.predictions:
        found = paths.parse(paths.PREDICTIONS_IMAGENET_C, path)
        predictions[(found["model"], found["corruption"])].append(path)
    clean = {paths.parse(paths.PREDICTIONS_CLEAN, p)["model"]: p for p in snakemake.input.clean}
    accuracy = (
        restricted.imagenet_c_clean_correct
        if snakemake.rule == "imagenet_c_clean_correct"
        else evaluate.imagenet_c_accuracy
    )
    table = accuracy(predictions, clean, dataset_label_space=snakemake.params.dataset_label_space)
    io.write_csv(table, snakemake.output[0])
