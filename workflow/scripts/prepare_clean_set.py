"""Decode, resize (256) and centre-crop (224) the dataset into the clean set (and keep the stored
images with ``dataset.resolution: stored``)."""

from vcrbench.datasets import loading
from vcrbench.plan import job
from vcrbench.settings import DatasetSettings

with job.run(snakemake):
    settings = DatasetSettings.of_config(snakemake.params.dataset)
    loading.prepare_clean_set(
        loading.selected_images(settings),
        images_path=snakemake.output.images,
        index_path=snakemake.output.index,
        settings=settings,
        threads=snakemake.threads,
    )
