# VCR-Bench: visually-continuous corruption robustness of image classifiers, against humans.
# The Snakefile is a table of contents; every stage is one file in rules/, all logic is in the
# `vcrbench` library (src/vcrbench), and scripts in workflow/scripts/ are thin. What gets built,
# where and with which settings is the plan layer's (vcrbench.plan, as PLAN in rules/common.smk).

from snakemake.utils import min_version

min_version("9.0")

# The config: the embedded default (config/config.yaml), named by the workflow profile
# (profiles/default: `configfile`), unless the command line names config files: a --configfile
# given there replaces the profile's (Snakemake's rule: the command line wins over a profile), so
# config/paper.yaml is not merged with the default's models and corruptions. --config KEY=VALUE
# applies on top of either (README, "Configuration").


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/checks.smk"
include: "rules/generate.smk"
include: "rules/infer.smk"
include: "rules/humans.smk"
include: "rules/estimate.smk"
include: "rules/figures.smk"
include: "rules/retrain.smk"
include: "rules/cluster.smk"


rule all:
    default_target: True
    input:
        PLAN.final_outputs(),
    localrule: True
