"""The dataset's check (done by the run's onstart, found done here, or done here): every defect
of its listing and every bad image named at once (vcrbench.plan.dataset_check)."""

from vcrbench.files import io
from vcrbench.plan import dataset_check, job, paths

with job.run(snakemake) as log:
    result = dataset_check.check_dataset(
        snakemake.params.dataset,
        snakemake.threads,
        paths.CHECK_DATASET,
        paths.CHECK_DATASET_PROBLEMS,
    )
    for bad in result["bad"]:
        log.warning("left out (dataset.on_error: skip): %s: %s", bad["path"], bad["problem"])
    io.write_json(result, snakemake.output[0])
