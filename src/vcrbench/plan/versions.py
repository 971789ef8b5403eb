"""The version of each stage's computation: bump a stage's number when its code changes what it
writes, and the next run redoes that stage's jobs and everything that reads their outputs, and
nothing else.

Every job gets its stage's version as the param ``version`` (each rule's
``version=PLAN.version("<its stage>")``, :func:`stage` of its rule); Snakemake reruns a job whose
params changed (its ``params`` rerun trigger, on by default), and the jobs downstream of it since
their inputs are then newer. A stage is a rule, except those of :data:`SAME_STAGE`: ``predict``
(the prediction rules, one computation), and the training set's
``sample_retrain_manifest`` and ``generate_retrain_shard``, which keep the version of the
evaluation-set rule they are made from (``use rule … as … with:``). The version is also in every
output's provenance record (``stage_version``, :mod:`vcrbench.files.provenance`).

The versions of the figures and tables are in their declarations (:mod:`vcrbench.plan.products`);
:func:`versions` is every stage's.
"""

from __future__ import annotations

from vcrbench.errors import PlanError, did_you_mean

VERSIONS: dict[str, int] = {
    # checks before any work
    "check_images": 1,
    # stage I: test sets
    "prepare_clean_set": 2,  # 2: the index records each image's conversion and aspect ratio
    "sample_manifest": 2,  # 2: a dv-stratified manifest records its first N draws' dv
    "generate_shard": 1,
    "generate_imagenet_c": 1,
    "coverage_table": 1,
    # inference
    "predict": 2,
    # humans
    "ingest_human_reference": 1,
    "map_human_conditions": 1,
    "estimate_human_curves": 1,
    "geirhos_dnn_table": 1,
    "geirhos_conditions_table": 1,
    "geirhos_trained_table": 1,
    "geirhos_error_consistency": 2,
    "screening_table": 1,
    # estimation
    "estimate_curves": 1,
    "collect_metrics": 2,
    "model_differences": 1,
    "model_error_consistency": 1,
    "zero_shot_tables": 1,
    "clean_correct": 1,
    "zero_shot_unseen_only": 1,
    "defense_table": 1,
    "definitions_table": 2,
    # retraining
    "prepare_retrain_pool": 1,
    "check_pool_overlap": 1,
    "finetune_model": 1,
    "fetch_weights": 1,
}


#: Rules whose stage is another's: the prediction rules are one computation, and a rule
#: made with ``use rule X as Y with:`` to run X's computation on other data is X's stage.
SAME_STAGE: dict[str, str] = {
    "predict_clean": "predict",
    "predict_group": "predict",
    "predict_imagenet_c": "predict",
    "predict_model": "predict",
    "sample_retrain_manifest": "sample_manifest",
    "generate_retrain_shard": "generate_shard",
}


def stage(rule: str) -> str:
    """The stage whose version ``rule``'s jobs carry (the rule's own name but for
    :data:`SAME_STAGE`)."""
    return SAME_STAGE.get(rule, rule)


def versions() -> dict[str, int]:
    """Every stage's version: :data:`VERSIONS`, and those of the declared figures and tables (a
    stage in both is an error naming it)."""
    from vcrbench.plan.products import products

    declared = {p.rule: p.version for p in products()}
    both = sorted(set(declared) & set(VERSIONS))
    if both:
        raise PlanError(f"stage(s) {both} have a version in VERSIONS and in a declaration")
    return {**VERSIONS, **declared}


def version(stage: str) -> int:
    """The version of ``stage``'s computation (an error naming it if it has none)."""
    known = versions()
    try:
        return known[stage]
    except KeyError:
        raise PlanError(
            f"stage {stage!r} has no version in vcrbench.plan.versions or a declared figure or "
            "table (vcrbench.plan.products)" + did_you_mean(stage, known)
        ) from None
