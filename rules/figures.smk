# Figures and tables of the paper, from the tables, estimates and predictions of the other stages
# (docs/figures.md). Nothing here runs a model: `snakemake paper_figures` redraws everything, and a
# change of the `figures` config block reruns only these rules. PNG goes into the report; the
# other formats of `figures.formats` (PDF by default) are written beside it for papers.
#
# No figure or table rule is written here: each is declared once (vcrbench.plan.products, the
# workflow's own in its modules tables and figures: the rule's name, outputs with their report
# captions, script, inputs, params, stage version and locality), and its rule is made below
# from the declaration, with the log, benchmark, software and `version` param every rule has
# (docs/architecture.md, "Add a figure or table"). `snakemake --list-rules` names them, and a
# dry run (`-n`) shows each job's inputs and outputs.
from vcrbench.plan import products

# --------------------------------------------------------------------------- declared rules


# The rule of each declared figure or table: the unnamed outputs, then the named ones
# (`declared_files`, `declared_named`: rules/common.smk), then its other outputs. Its script is
# found by the rule's name: Snakemake reads a `script:` path once here and again when a job runs,
# in the job's function, where `rule` is the job's rule and `_product` the loop's last product.
for _product in products.products():

    rule:
        name:
            _product.rule
        input:
            **_product.inputs(PLAN),
        output:
            *declared_files(_product.rule),
            **declared_named(_product.rule),
            **_product.other_outputs,
        log:
            paths.log(_product.rule, declared_job(_product.rule)),
        benchmark:
            paths.benchmark(_product.rule, declared_job(_product.rule))
        localrule: _product.local
        conda:
            VCRBENCH_ENV
        resources:
            **PLAN.resources(_product.rule),
        params:
            **(_product.params(PLAN) if _product.params else {}),
            version=PLAN.version(_product.rule),
        script:
            declared_script(locals().get("rule", _product.rule))


# --------------------------------------------------------------------------- target


rule paper_figures:
    input:
        PLAN.figure_targets,
    localrule: True
