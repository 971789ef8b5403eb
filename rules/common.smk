# Config validation and the plan: every list, path, input/param function and resource set the
# rules use comes from vcrbench.plan (PLAN); this file only builds it. Any logic lives there.
import os

from vcrbench import plan as vplan
from vcrbench.plan import paths, products, versions

# Validate against the schema (filling defaults), then check names against the registries and
# paths that must exist, all before any job starts; errors name the key (`sampling.n_samples`).
try:
    vplan.validate(config)
    PLAN = vplan.Plan(config)
except vplan.ConfigError as exc:
    raise WorkflowError(f"invalid config: {exc}") from None

# What every job has is written in each of the rules, in Snakemake's own directives. Its log and
# benchmark files are named by the rule and its output's wildcards (`paths.log`, `paths.benchmark`;
# the job name is `paths.job_name` of the first output), its software is `conda: VCRBENCH_ENV`
# (relative to rules/), its stage's version the param `version` (`PLAN.version`). A use-rule-with
# copy inherits them, and names its own log, benchmark and (for a stage of its own) version.
# tests/unit/test_versions.py checks every one.
VCRBENCH_ENV = "../envs/vcrbench.yaml"


# The outputs of a declared figure or table rule (vcrbench.plan.products), as rules/figures.smk
# gives them: each output's file shown in the report (`report(...)`, its caption under report/),
# then its other formats. NAMES: the run's names, for an output made once per name in its one
# rule (`each`).
NAMES = {"corruption": PLAN.corruptions}


def _report(file, out, subcategory, labels):
    extra = {} if subcategory is None else {"subcategory": subcategory}
    # relative to rules/, as Snakemake takes it; an absolute caption stays as it is
    caption = os.path.join("../report", out.caption)
    return report(file, caption=caption, category=out.category, **extra, labels=labels)


def _declared(out):
    shown = [_report(f, out, sub, labels) for f, sub, labels in out.shown(NAMES)]
    return (shown if out.each else shown[0]), out.others(PLAN.extra_formats, NAMES)


def declared_files(rule):
    """The unnamed outputs of a declared rule, in order: each output's file shown in the report,
    then its other formats."""
    files = []
    for out in products.product(rule).outputs:
        if out.name is None:
            shown, others = _declared(out)
            files += [shown, *others]
    return files


def declared_named(rule):
    """The named outputs of a declared rule (`<name>` shown, `<name>_other`)."""
    named = {}
    for out in products.product(rule).outputs:
        if out.name is not None:
            named[out.name], named[f"{out.name}_other"] = _declared(out)
    return named


def declared_script(rule):
    """The script of a declared rule (relative to rules/, or absolute)."""
    return products.product(rule).script


def declared_job(rule):
    """What names a job of a declared rule in its log and benchmark (`paths.job_name` of its
    first output's file shown in the report)."""
    first, _, _ = products.product(rule).outputs[0].shown(NAMES)[0]
    return paths.job_name(rule, first)


wildcard_constraints:
    corruption=vplan.alternatives(PLAN.corruptions),
    model=vplan.alternatives(PLAN.models),
    reference=vplan.alternatives(PLAN.references),
    run=vplan.alternatives(PLAN.runs),
    shard=r"\d{5}",
    group=r"\d{5}",
