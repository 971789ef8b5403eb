"""Stage versions (vcrbench.plan.versions): every rule passes its stage's version as a param, and
every stage with a version has a rule (the workflow test bumps one and checks what reruns)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vcrbench.errors import PlanError
from vcrbench.plan import Plan, load, products
from vcrbench.plan.versions import SAME_STAGE, VERSIONS, stage, version, versions

RULES = Path(__file__).resolve().parents[2] / "rules"
#: Rules that compute nothing (targets only).
AGGREGATES = {"paper_figures"}
#: Rules made with ``use rule … as X with:``.
USED = {
    m.group(1)
    for p in RULES.glob("*.smk")
    for m in re.finditer(r"^ *use rule \w+ as (\w+) with:", p.read_text(), re.M)
}
#: A rule's text runs to the next rule or the next line at the left margin (rules may stand
#: indented under an ``if``, as the prediction rules do).
RULE_RE = re.compile(
    r"^ *(?:rule (\w+)|use rule \w+ as (\w+) with):\n(.*?)(?=^ *(?:rule |use rule )|^\S|\Z)",
    re.M | re.S,
)
#: The prediction rules' params, written once in rules/infer.smk (their stage's version among them).
PREDICT_PARAMS = re.search(
    r"^PREDICT_PARAMS = dict\((.*?)^\)", (RULES / "infer.smk").read_text(), re.M | re.S
).group(1)


def rule_blocks() -> dict[str, str]:
    """``{rule: its text}`` of every rule in rules/*.smk, ``use rule … as X`` ones included."""
    blocks = {}
    for path in sorted(RULES.glob("*.smk")):
        for m in RULE_RE.finditer(path.read_text()):
            blocks[m.group(1) or m.group(2)] = m.group(3)
    return blocks


def test_every_rule_has_a_stage_version_and_every_stage_a_rule():
    """Every rule writes its stage's version as the param ``version`` (``PLAN.version``), its log
    and benchmark under its own name, and its software; a ``use rule … with:`` rule inherits
    the software and, where it is its parent's stage (:data:`SAME_STAGE`), the version."""
    blocks = rule_blocks()
    assert len(blocks) > 30
    stages = {}
    for rule, body in sorted(blocks.items()):
        if rule in AGGREGATES:
            assert "script:" not in body
            continue
        stages[rule] = stage(rule)
        assert stages[rule] in versions(), (rule, stages[rule])
        child = rule in USED
        inherited = (child and rule in SAME_STAGE) or re.search(r"\*\*rules\.\w+\.params", body)
        if "**PREDICT_PARAMS" in body:
            assert stages[rule] == "predict", rule
            assert 'version=PLAN.version("predict")' in PREDICT_PARAMS
        elif not inherited:
            assert f'version=PLAN.version("{stages[rule]}")' in body, rule
        assert re.search(rf'log:\n\s+paths\.log\("{rule}", "([^"]+)"\)', body), rule
        name = re.search(rf'log:\n\s+paths\.log\("{rule}", "([^"]+)"\)', body).group(1)
        assert f'paths.benchmark("{rule}", "{name}")' in body, rule
        assert child or re.search(r"conda:\n\s+VCRBENCH_ENV", body), rule
    # the figure and table rules, made from their declarations in rules/figures.smk's loop
    loop = (RULES / "figures.smk").read_text().split("for _product in products.products():")[1]
    assert "version=PLAN.version(_product.rule)" in loop
    assert "paths.log(_product.rule, declared_job(_product.rule))" in loop
    assert "paths.benchmark(_product.rule, declared_job(_product.rule))" in loop
    assert re.search(r"conda:\n\s+VCRBENCH_ENV", loop)
    for declared in products.products():
        assert declared.rule not in stages, f"{declared.rule}: declared and written"
        stages[declared.rule] = stage(declared.rule)
    assert set(stages.values()) == set(versions())  # no stage without a rule
    assert set(SAME_STAGE) <= set(stages)  # no alias of a rule that is gone
    assert {r for r, s in stages.items() if s == "predict"} == {
        "predict_clean",
        "predict_group",
        "predict_imagenet_c",
        "predict_model",
    }
    assert stages["generate_retrain_shard"] == "generate_shard"
    assert stages["geirhos_trained_table"] == "geirhos_trained_table"  # its own computation
    assert all(isinstance(v, int) and v >= 1 for v in versions().values())
    assert versions()["plot_curves"] == 1  # a declared figure's (vcrbench.plan.products)


def test_an_unknown_stage_is_named():
    assert version("predict") == VERSIONS["predict"]
    config = load(RULES.parent / "config" / "config.yaml")
    assert Plan(config).version("collect_metrics") == VERSIONS["collect_metrics"]
    with pytest.raises(PlanError, match=r"stage 'predikt' has no version .*did you mean 'predict'"):
        version("predikt")
