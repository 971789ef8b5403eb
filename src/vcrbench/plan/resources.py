"""What each rule's jobs need: threads, memory (MB) and run time (minutes).

Rules declare ``resources: **PLAN.resources("rule")``: the defaults below, and the rule's own
entry where it needs more. Where jobs run (partitions, accounts, GPUs) is the profiles' business.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

#: What a rule without an entry gets: a small CPU job.
DEFAULT: dict[str, int] = {"mem_mb": 2000, "runtime": 10}

#: The rules that need more than :data:`DEFAULT`.
RULES: dict[str, dict[str, int]] = {
    "prepare_clean_set": {"mem_mb": 4000, "runtime": 120},
    "sample_manifest": {"mem_mb": 4000, "runtime": 120},
    "generate_shard": {"mem_mb": 3000, "runtime": 60},
    "generate_imagenet_c": {"mem_mb": 4000, "runtime": 120},
    "coverage_table": {"runtime": 30},
    "predict_clean": {"mem_mb": 8000, "runtime": 60},
    "predict_group": {"mem_mb": 8000, "runtime": 120},
    "map_human_conditions": {"mem_mb": 4000, "runtime": 60},
    "estimate_human_curves": {"mem_mb": 4000, "runtime": 30},
    "geirhos_dnn_table": {"mem_mb": 4000, "runtime": 30},
    "geirhos_conditions_table": {"mem_mb": 4000, "runtime": 10},
    "geirhos_trained_table": {"mem_mb": 4000, "runtime": 60},
    "estimate_curves": {"mem_mb": 4000, "runtime": 30},
    "zero_shot_tables": {"mem_mb": 4000, "runtime": 30},
    "prepare_retrain_pool": {"mem_mb": 4000, "runtime": 120},
    "check_pool_overlap": {"runtime": 60},
    "finetune_model": {"runtime": 720},
}


def rule_resources(rule: str, **computed: Callable | int) -> Mapping[str, int | Callable]:
    """The resources of ``rule``: the defaults, its entry, then ``computed`` values (functions
    of the job that Snakemake calls, e.g. a fine-tuning's memory from its training set)."""
    return {**DEFAULT, **RULES.get(rule, {}), **computed}
