# Faults without a manual step: a killed run resumes with the same command (its lock went with
# its process, its temporaries are removed), a second run beside a live one is refused naming it
# (vcrbench.plan.runlock: the run's own lock, taken in `onstart`, so never by a dry run or a
# cluster job; Snakemake's is off, `nolock` in profiles/default).
import os
import sys

from vcrbench.files import io
from vcrbench.errors import ConfigError, DatasetError, ModelConfigError
from vcrbench.models import checks as model_checks
from vcrbench.plan import cluster as vcluster
from vcrbench.plan import (
    dataset_check,
    label_space_check,
    runlock,
    snakemake_compat,
)
from vcrbench.plan import work as vwork

RUN = {}  # this run, once `onstart` has taken the folder


onstart:
    RUN["run"] = runlock.acquire()
    # Every job's environment (vcrbench.plan.cluster.job_environment): the jobs this process starts
    # inherit it, and so do cluster jobs (the SLURM executor submits with --export=ALL).
    os.environ.update(vcluster.job_environment(PLAN.config))
    for tmp in io.sweep_temporaries(paths.RESULTS):
        print(f"vcrbench: removed {tmp}, left by a killed job", file=sys.stderr)
    planned = snakemake_compat.planned_jobs(workflow)
    running = snakemake_compat.to_run(planned)
    print(
        vwork.plan_line(
            PLAN.config,
            [(job.rule, job.wildcards) for job in running],
            PLAN.clean_images,
            snakemake_compat.cores(workflow),
        ),
        file=sys.stderr,
    )
    try:  # every check, each named even when another fails
        _, checked, warnings = dataset_check.run_all(
            lambda: dataset_check.check_planned(
                running,
                PLAN.section("dataset"),
                paths.CHECK_DATASET,
                paths.CHECK_DATASET_PROBLEMS,
            ),
            lambda: model_checks.check_planned(
                planned,
                vplan.checks.model_check_entries(PLAN.config),
                paths.CHECK_MODELS,
            ),
            lambda: label_space_check.check_planned(
                running, PLAN.config, dataset_check.NO_JOB
            ),
        )
    except (DatasetError, ModelConfigError, ConfigError):
        runlock.release(RUN.get("run"))
        raise
    if checked:
        print(
            f"vcrbench: model entries checked: {', '.join(checked)}",
            file=sys.stderr,
        )
    for warning in warnings or ():
        print(f"vcrbench: warning: {warning}", file=sys.stderr)


onsuccess:
    runlock.release(RUN.get("run"))


onerror:
    runlock.release(RUN.get("run"))


# What jobs would otherwise find late, checked first, in `onstart`: in the main process, after
# Snakemake has planned the jobs and before it starts or submits any (a dry run skips it). The
# dataset (every defect of its listing and every bad image named at once), when the job
# check_images is planned: that job, which the clean set waits for as an `ancient` input (a rerun
# check reruns nothing else), then finds the check done (vcrbench.plan.dataset_check). Every model
# entry (id in its source, weights, head against the label space; a dry run imports no model
# library). Each entry is checked
# once, as it is: results/checks/models.json records the checked entries, so adding a model checks
# that model, and, being no job's output, reruns nothing else.
# The label spaces, when curves are to be estimated: the samples of each corruption's set that
# fall in each label space, counted from the dataset's listing and the seed, against
# estimation.min_count; a label space that cannot fit a curve refuses the run, one that fits on
# part of the dv range only is warned about once (vcrbench.plan.label_space_check).


rule check_images:
    output:
        paths.CHECK_IMAGES,
    log:
        paths.log("check_images", "check_images"),
    benchmark:
        paths.benchmark("check_images", "check_images")
    localrule: True
    conda:
        VCRBENCH_ENV
    threads: 8
    resources:
        **PLAN.resources("check_images"),
    params:
        dataset=PLAN.section("dataset"),
        version=PLAN.version("check_images"),
    script:
        "../workflow/scripts/check_images.py"
