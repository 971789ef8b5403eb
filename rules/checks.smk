# Faults without a manual step: a killed run resumes with the same command (its stale lock and
# temporaries removed), a second run beside a live one is refused naming it
# (vcrbench.plan.runlock).
import sys

from vcrbench import io
from vcrbench.plan import runlock

RUN = runlock.start(workflow)


onstart:
    runlock.started(workflow, RUN)
    for tmp in io.sweep_temporaries(paths.RESULTS):
        print(f"vcrbench: removed {tmp}, left by a killed job", file=sys.stderr)


onsuccess:
    runlock.ended(RUN)


onerror:
    runlock.ended(RUN)


# What every job would otherwise find late, checked by the first jobs (which every other job
# waits for, as `ancient` inputs: a rerun check reruns nothing else): every image of the dataset
# (all bad files named at once) and every model entry (id, weights, head).
CHECKS = [paths.CHECK_IMAGES, paths.CHECK_MODELS]


rule check_images:
    output:
        paths.CHECK_IMAGES,
    localrule: True
    threads: 8
    resources:
        **PLAN.resources("check_images"),
    params:
        dataset=PLAN.section("dataset"),
    script:
        "../workflow/scripts/check_images.py"


rule check_models:
    output:
        paths.CHECK_MODELS,
    localrule: True
    resources:
        **PLAN.resources("check_models"),
    params:
        models=vplan.checks.model_check_entries(PLAN.config),
    script:
        "../workflow/scripts/check_models.py"
