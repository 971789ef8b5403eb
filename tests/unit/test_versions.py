"""Stage versions (vcrbench.plan.versions): every rule passes its stage's version as a param, and
every stage with a version has a rule (the workflow test bumps one and checks what reruns)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vcrbench.errors import PlanError
from vcrbench.plan import Plan, load
from vcrbench.plan.versions import VERSIONS, version

RULES = Path(__file__).resolve().parents[2] / "rules"
#: Rules that compute nothing (targets only).
AGGREGATES = {"paper_figures"}
#: Rules whose params copy another rule's (``**rules.X.params``), version included.
COPIES = {"predict_group": "predict_clean"}


def rule_blocks() -> dict[str, str]:
    """``{rule: its text}`` of every ``rule X:`` in rules/*.smk (``use rule`` ones excluded)."""
    blocks = {}
    for path in sorted(RULES.glob("*.smk")):
        text = path.read_text()
        for m in re.finditer(r"^rule (\w+):\n(.*?)(?=^\S|\Z)", text, re.MULTILINE | re.DOTALL):
            blocks[m.group(1)] = m.group(2)
    return blocks


def stage_of(blocks: dict[str, str], rule: str) -> str | None:
    found = re.findall(r'^\s+version=PLAN\.version\("(\w+)"\),$', blocks[rule], re.MULTILINE)
    assert len(found) <= 1, (rule, found)
    return found[0] if found else None


def test_every_rule_passes_its_stage_version():
    blocks = rule_blocks()
    assert len(blocks) > 30
    stages = {}
    for rule in sorted(blocks):
        if rule in AGGREGATES:
            assert "script:" not in blocks[rule]
            continue
        if rule in COPIES:
            assert f"**rules.{COPIES[rule]}.params" in blocks[rule]
            continue
        stage = stage_of(blocks, rule)
        assert stage is not None, f"rule {rule} has no version=PLAN.version(...) param"
        assert stage in VERSIONS, (rule, stage)
        stages[rule] = stage
    assert set(stages.values()) == set(VERSIONS)  # no stage without a rule
    assert stages["predict_clean"] == "predict"
    assert all(isinstance(v, int) and v >= 1 for v in VERSIONS.values())


def test_an_unknown_stage_is_named():
    assert version("predict") == VERSIONS["predict"]
    config = load(RULES.parent / "config" / "config.yaml")
    assert Plan(config).version("collect_metrics") == VERSIONS["collect_metrics"]
    with pytest.raises(PlanError, match=r"stage 'predikt' has no version .*did you mean 'predict'"):
        version("predikt")
