"""Check every image of the dataset before any work; name every bad file at once."""

from vcrbench import datasets, imagefiles, io
from vcrbench.errors import DatasetError
from vcrbench.plan import job

with job.run(snakemake) as log:
    ds = snakemake.params.dataset
    records = datasets.load_dataset(
        ds["kind"], ds["path"], ds["labels"], label_space=ds["label_space"], split=ds["split"]
    )
    records = datasets.select_images(records, ds["include"], ds["exclude"])
    if ds["limit"] is not None:
        records = records.iloc[: ds["limit"]]
    bad = imagefiles.check_images(records["path"].tolist(), threads=snakemake.threads)
    if bad and ds["on_error"] == "raise":
        raise DatasetError(imagefiles.describe(bad, len(records)))
    for path, why in bad:
        log.warning("left out (dataset.on_error: skip): %s: %s", path, why)
    io.write_json(
        {"n_images": len(records), "bad": [{"path": p, "problem": w} for p, w in bad]},
        snakemake.output[0],
    )
