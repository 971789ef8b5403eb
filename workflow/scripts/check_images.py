"""Check the dataset before any work: every defect of its listing and every bad image file
named at once (the full list in paths.CHECK_DATASET_PROBLEMS)."""

from vcrbench import datasets, imagefiles, io
from vcrbench.errors import DatasetError
from vcrbench.plan import job, paths

with job.run(snakemake) as log:
    ds = snakemake.params.dataset
    listing = []  # the listing's defects: missing files, unknown labels, duplicate rows
    records = datasets.load_dataset(
        ds["kind"], ds["path"], ds["labels"], label_space=ds["label_space"], split=ds["split"],
        problems=listing,
    )  # fmt: skip
    records = datasets.select_images(records, ds["include"], ds["exclude"])
    if ds["limit"] is not None:
        records = records.iloc[: ds["limit"]]
    bad = imagefiles.check_images(records["path"].tolist(), threads=snakemake.threads)
    stop = listing + (bad if ds["on_error"] == "raise" else [])
    imagefiles.write_problems(stop, paths.CHECK_DATASET_PROBLEMS)
    if stop:
        raise DatasetError(
            imagefiles.describe(stop, len(records), paths.CHECK_DATASET_PROBLEMS)
        )
    for path, why in bad:
        log.warning("left out (dataset.on_error: skip): %s: %s", path, why)
    io.write_json(
        {"n_images": len(records), "bad": [{"path": p, "problem": w} for p, w in bad]},
        snakemake.output[0],
    )
