"""vcrbench.plan.products: each figure and table declared once, its files, version and locality
read from the declaration (issue 30)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vcrbench.errors import PlanError
from vcrbench.plan import Plan, cluster, load, products, versions

REPO = Path(__file__).resolve().parents[2]

NAMES = {"corruption": ["fog", "snow"]}


def test_a_figure_is_shown_as_png_and_written_in_every_format():
    curves = products.product("plot_curves").outputs[0]
    assert curves.shown(NAMES) == [
        (
            "results/figures/curves/{corruption}.png",
            "{corruption}",
            {"corruption": "{corruption}", "figure": "curves s_a, s_p"},
        )
    ]
    assert curves.others(["pdf", "svg"], NAMES) == [
        "results/figures/curves/{corruption}.pdf",
        "results/figures/curves/{corruption}.svg",
    ]
    assert curves.files(["svg"], {"corruption": "fog"}, NAMES) == ["results/figures/curves/fog.svg"]


def test_an_output_per_corruption_in_one_rule():
    leaderboards = products.product("paper_tables").outputs[2]
    shown = leaderboards.shown(NAMES)
    assert [s[0] for s in shown] == [
        "results/tables/paper/leaderboard/fog.csv",
        "results/tables/paper/leaderboard/snow.csv",
    ]
    assert shown[1][1:] == ("snow", {"corruption": "snow", "table": "leaderboard"})
    assert leaderboards.others(["pdf"], NAMES) == [  # a table's formats, not the figures'
        "results/tables/paper/leaderboard/fog.md",
        "results/tables/paper/leaderboard/fog.tex",
        "results/tables/paper/leaderboard/snow.md",
        "results/tables/paper/leaderboard/snow.tex",
    ]


def test_what_a_config_plans():
    config = load(REPO / "config" / "config.yaml")
    corruptions = list(config["corruptions"])
    assert products.product("plot_curves").planned(config) == [
        {"corruption": c} for c in corruptions
    ]
    assert products.product("plot_defenses").planned(config) == []  # no defended model
    assert products.product("models_table").planned(config) == [{}]
    targets = products.targets(config)
    assert "results/tables/paper/table1_models.tex" in targets
    assert products.product("plot_examples_overview").planned(config) == [{}]  # Fig. 3: one
    assert {"results/figures/examples/overview.png", "results/figures/examples/overview.pdf"} <= (
        set(targets)
    )
    assert f"results/figures/curves/{corruptions[0]}.pdf" in targets
    assert not [t for t in targets if "defenses" in t]


def test_versions_and_locality_come_from_the_declarations():
    for p in products.products():
        assert versions.version(p.rule) == p.version
        assert p.rule in cluster.archive_rules()
        assert (p.rule in cluster.local_rules()) == p.local
    assert not set(versions.VERSIONS) & {p.rule for p in products.products()}
    # bumped where what they write changed: Table 1's columns, the grids' top Δv
    assert versions.version("models_table") == 2 and versions.version("plot_examples") == 2


def test_a_declaration_is_checked():
    with pytest.raises(PlanError, match="'plot_curves' is declared twice"):
        products.declare(products.product("plot_curves"))
    # every rule is made from its declaration: no declaration without its script and inputs
    for half in (
        products.Product("plot_half", (), script="x.py"),
        products.Product("plot_half", (), inputs=lambda plan: {}),
        products.Product("plot_half", ()),
    ):
        with pytest.raises(PlanError, match="'plot_half'.*both its script and its inputs"):
            products.declare(half)
    named = products.Output("a.{ext}", "a.rst", "Tables", formats=("csv",), name="a")
    unnamed = products.Output("b.{ext}", "b.rst", "Tables", formats=("csv",))
    muddled = products.Product("plot_half", (named, unnamed), script="x.py", inputs=lambda plan: {})
    with pytest.raises(PlanError, match="'plot_half'.*named outputs come after the unnamed"):
        products.declare(muddled)
    with pytest.raises(PlanError, match="no figure or table rule 'plot_curvs'.*plot_curves"):
        products.product("plot_curvs")
    assert "plot_half" not in {p.rule for p in products.products()}


def test_every_declared_rule_has_its_script_and_reads_what_the_plan_gives():
    """The workflow's own declarations: each script is a file of workflow/scripts (named as
    rules/figures.smk gives it, relative to rules/), and the inputs and params are a plan's
    names: paths, lists of them, or functions of the job's wildcards."""
    plan = Plan(load(REPO / "config" / "config.yaml"))
    for p in products.products():
        assert (REPO / "rules" / p.script).resolve().is_file(), p.rule
        inputs = p.inputs(plan)
        assert inputs and all(isinstance(k, str) for k in inputs), p.rule
        for value in inputs.values():
            assert isinstance(value, (str, list)) or callable(value), (p.rule, value)
        params = p.params(plan) if p.params else {}
        assert "version" not in params, p.rule  # the rule adds its stage's
