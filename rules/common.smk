# Config validation and the plan: every list, path, input/param function and resource set the
# rules use comes from vcrbench.plan (PLAN); this file only builds it. Any logic lives there.
from vcrbench import plan as vplan
from vcrbench.plan import paths, versions

# Validate against the schema (filling defaults), then check names against the registries and
# paths that must exist, all before any job starts; errors name the key (`sampling.n_samples`).
try:
    vplan.validate(config)
    PLAN = vplan.Plan(config)
except vplan.ConfigError as exc:
    raise WorkflowError(f"invalid config: {exc}") from None

# Every rule writes what every job has, in Snakemake's own directives: a log and a benchmark file
# named by the rule and its output's wildcards (`paths.log`, `paths.benchmark`: the job name is
# `paths.job_name` of its first output), the software (`conda: VCRBENCH_ENV`, relative to rules/)
# and its stage's version as the param `version` (`PLAN.version`, vcrbench.plan.versions); a rule
# made with `use rule … with:` inherits them and names its own log, benchmark and (when it is a
# stage of its own) version. tests/workflow/test_rule_conventions.py checks every rule.
VCRBENCH_ENV = "../envs/vcrbench.yaml"


wildcard_constraints:
    corruption=vplan.alternatives(PLAN.corruptions),
    model=vplan.alternatives(PLAN.models),
    reference=vplan.alternatives(PLAN.references),
    run=vplan.alternatives(PLAN.runs),
    shard=r"\d{5}",
    group=r"\d{5}",
