"""A figure added as docs/architecture.md's recipe "Add a figure or table" says (issue 30): declared
once, from a module of its own (tests/support/toy), it is planned by `rule all`, gets a rule made
from its declaration (log, benchmark, version, locality), and is built. The workflow's own 20
figure and table rules are made the same way (issue 37): each is its declaration, as Snakemake
sees it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from vcrbench.plan import Plan, load, paths, products

from .conftest import REPO, TINY, snakemake, write_config

#: A Snakefile that reads the toy's declaration, then the workflow's own.
SNAKEFILE = """
import sys
from pathlib import Path
sys.path.insert(0, {repo!r})
import tests.support.toy.figure  # declares it

include: {snakefile!r}
"""

#: What the plan knows of the toy once declared (in a process of its own: a declaration is for
#: the life of the process, and the other tests' plans have no toy).
KNOWN = """
import json
from tests.support.toy.figure import TOY
from vcrbench.plan import cluster, products, versions
print(json.dumps({
    "product": products.product("plot_toy_labels") is TOY,
    "version": versions.version("plot_toy_labels"),
    "local": "plot_toy_labels" in cluster.local_rules(),
    "archive": "plot_toy_labels" in cluster.ARCHIVE_RULES,
    "targets": TOY.targets({}, ["png", "svg"], {}),
}))
"""


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }


def test_a_declared_figure_is_known_to_the_plan():
    proc = subprocess.run(
        [sys.executable, "-c", KNOWN], capture_output=True, text=True, env=_env(), cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout) == {
        "product": True,
        "version": 3,
        "local": True,
        "archive": True,
        "targets": ["results/figures/toy/labels.png", "results/figures/toy/labels.svg"],
    }


@pytest.mark.slow  # runs jobs: `make test`, not test-fast
def test_a_declared_figure_is_planned_and_built(tmp_path):
    snakefile = tmp_path / "Snakefile"
    snakefile.write_text(SNAKEFILE.format(repo=str(REPO), snakefile=str(REPO / "Snakefile")))
    # both formats of the default (the tiny config draws PNG alone)
    config = write_config(tmp_path / "config.yaml", figures={"formats": ["png", "pdf"]})
    env = _env()
    planned = snakemake(tmp_path, "-n", "all", configfile=config, env=env, snakefile=snakefile)
    said = planned.stdout + planned.stderr
    assert planned.returncode == 0, said[-3000:]
    # rule all asks for it: one job in the plan's table of jobs per rule
    assert re.search(r"^plot_toy_labels\s+1$", said, re.M), said[-3000:]

    built = snakemake(
        tmp_path, "--cores", "2", "plot_toy_labels", configfile=config, env=env, snakefile=snakefile
    )
    assert built.returncode == 0, (built.stdout + built.stderr)[-3000:]
    results = tmp_path / "results"
    for ext in ("png", "pdf"):  # the report's, and the other of the figures.formats default
        assert (results / "figures" / "toy" / f"labels.{ext}").stat().st_size > 0
    assert (results / "logs" / "plot_toy_labels" / "plot_toy_labels.log").is_file()
    assert (results / "benchmarks" / "plot_toy_labels" / "plot_toy_labels.tsv").is_file()
    record = json.loads(
        (results / "provenance" / "figures" / "toy" / "labels.png.json").read_text()
    )
    assert record["rule"] == "plot_toy_labels"
    assert record["stage_version"] == 3  # the declared version


#: The tiny config with what plans every declared figure and table: a defended model, Geirhos et
#: al.'s trained networks, and a retraining run (its pool disjoint from the six evaluation images).
EVERY = {
    "dataset": {"kind": "embedded", "limit": 6},
    "models": {
        **yaml.safe_load(TINY.read_text())["models"],
        "efficientnet_lite0_smooth": {"base": "efficientnet_lite0", "defense": "spatial_smoothing"},
    },
    "humans": {**yaml.safe_load(TINY.read_text())["humans"], "trained_table": True},
    "retrain": {
        "runs": {"lite0_vcr": {"base": "efficientnet_lite0", "corruptions": ["gaussian_noise"]}},
        "pool": {"kind": "embedded", "include": ["skimage-rocket", "sklearn-china"]},
    },
}


def _expected_outputs(product, wildcards, plan) -> tuple[dict[str, str], dict[str, str]]:
    """``{file: caption}`` of the files the report shows, and ``{file: name}`` of every output
    (None: unnamed), from the declaration alone."""
    values = {"corruption": plan.corruptions}
    shown, files = {}, {}
    for out in product.outputs:
        for file, _, _ in out.shown(values):
            shown[paths.fill(file, **wildcards)] = out.caption
            files[paths.fill(file, **wildcards)] = out.name
        for file in out.others(plan.extra_formats, values):
            files[paths.fill(file, **wildcards)] = None if out.name is None else f"{out.name}_other"
    files.update({path: name for name, path in product.other_outputs.items()})
    return shown, files


def test_every_declared_rule_is_its_declaration_as_snakemake_sees_it(tmp_path):
    """Every job of every declared figure and table rule, read from Snakemake's own DAG
    (tests/support/rule_snapshot.py), has the outputs, report captions, log, benchmark,
    locality, script, input names and params (its declaration's and its stage's version) of
    its declaration: none of them is written anywhere else."""
    config = write_config(tmp_path / "config.yaml", **EVERY)
    out = tmp_path / "rules.json"
    proc = subprocess.run(
        [sys.executable, "-m", "tests.support.rule_snapshot", str(REPO / "Snakefile"), str(config),
         str(tmp_path), str(out)],
        capture_output=True, text=True, env=_env(), cwd=REPO,
    )  # fmt: skip
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    jobs = json.loads(out.read_text())
    plan = Plan(load(config))
    assert {j["rule"] for j in jobs} == {p.rule for p in products.products()}
    for job in jobs:
        rule, wildcards = job["rule"], job["wildcards"]
        product = products.product(rule)
        where = (rule, wildcards)
        shown, files = _expected_outputs(product, wildcards, plan)
        assert sorted(job["output"]) == sorted(files), where
        assert {f: Path(c).name for f, c in shown.items()} == job["report"], where
        named = {}
        for file, name in files.items():
            if name is not None:
                named.setdefault(name, []).append(file)
        assert {k: v if isinstance(v, list) else [v] for k, v in job["output_named"].items()} == (
            named
        ), where
        # the wildcards of the first output's file in the report name the job
        first = product.outputs[0].shown({"corruption": plan.corruptions})[0][0]
        name = paths.fill(paths.job_name(rule, first), **wildcards)
        assert job["log"] == [paths.log(rule, name)] and job["benchmark"] == paths.benchmark(
            rule, name
        ), where
        assert job["local"] is product.local and job["script"] == product.script, where
        assert set(job["input_named"]) == set(product.inputs(plan)), where
        declared = set(product.params(plan)) if product.params else set()
        assert set(job["params"]) == declared | {"version"}, where
        assert job["params"]["version"] == repr(product.version), where
