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


# What jobs would otherwise find late, checked first: every image of the dataset (all bad files
# named at once), which the clean set waits for as an `ancient` input (a rerun check reruns
# nothing else), and every model entry (id, weights, head), a local job of its own. No job waits
# for the model check: Snakemake (9.27) plans no job downstream of an `ancient` input whose job
# reruns for changed params (as this one does when a model is added). Each model's weights are
# fetched by the local rule fetch_weights before any of its inference jobs, which names a model
# that cannot be built before any GPU job.


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
