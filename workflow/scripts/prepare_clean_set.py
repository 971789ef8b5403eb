"""Decode, resize (256) and centre-crop (224) the dataset into the clean set (and keep the stored
images with ``dataset.resolution: stored``)."""

from vcrbench import datasets
from vcrbench.plan import config as cfg
from vcrbench.plan import job

with job.run(snakemake):
    ds = snakemake.params.dataset
    records = datasets.load_dataset(
        ds["kind"], ds["path"], ds["labels"], label_space=ds["label_space"], split=ds["split"]
    )
    records = datasets.select_images(records, ds["include"], ds["exclude"])
    datasets.prepare_clean_set(
        records,
        images_path=snakemake.output.images,
        index_path=snakemake.output.index,
        resize=ds["resize"],
        crop=ds["crop"],
        on_error=ds["on_error"],
        threads=snakemake.threads,
        limit=ds["limit"],
        exif_transpose=ds["exif_transpose"],
        stored_path=snakemake.output.get("stored"),
        stored_max_side=cfg.stored_max_side({"dataset": ds}),  # None unless resolution: stored
    )
