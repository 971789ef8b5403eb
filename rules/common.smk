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

# The software of every rule (for `--software-deployment-method conda`; relative to rules/).
VCRBENCH_ENV = "../envs/vcrbench.yaml"


def add_job_defaults(r):
    """Give `r` what every job has, derived from the rule's name (so rules/*.smk leave it out): a
    log and a benchmark file per job (`paths.log`, `paths.benchmark`, named by the job's
    wildcards, `paths.job_name`), the software environment, and its stage's version as the param
    `version` (`plan.versions.stage`). The Snakefile calls it on every rule once all are defined;
    a rule that sets one of these itself keeps its own."""
    if not r.output:  # targets (`all`, `paper_figures`) run nothing
        return
    name = paths.job_name(r.name, r.output[0])
    # the workflow's path handling (prefixes, storage), as Snakemake gives each rule's outputs
    r.log_modifier = r.log_modifier or r.output_modifier
    r.benchmark_modifier = r.benchmark_modifier or r.output_modifier
    if not r.log:
        r.set_log(paths.log(r.name, name))
    if r.benchmark is None:
        r.benchmark = paths.benchmark(r.name, name)
    if r.conda_env is None:
        r.conda_env = VCRBENCH_ENV
    if "version" not in r.params.keys():
        r.set_params(version=PLAN.version(versions.stage(r.name)))


wildcard_constraints:
    corruption=vplan.alternatives(PLAN.corruptions),
    model=vplan.alternatives(PLAN.models),
    reference=vplan.alternatives(PLAN.references),
    run=vplan.alternatives(PLAN.runs),
    shard=r"\d{5}",
    group=r"\d{5}",
