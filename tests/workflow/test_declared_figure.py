"""A figure added as docs/architecture.md's recipe "Add a figure or table" says (issue 30): declared
once, from a module of its own (tests/support/toy), it is planned by `rule all`, gets a rule made
from its declaration (log, benchmark, version, locality), and is built."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from .conftest import REPO, snakemake, write_config

#: A Snakefile that reads the toy's declaration, then the workflow's own.
SNAKEFILE = """
import sys
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
    config = write_config(tmp_path / "config.yaml")
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
    for ext in ("png", "pdf"):  # the report's, and the figures.formats default's
        assert (results / "figures" / "toy" / f"labels.{ext}").stat().st_size > 0
    assert (results / "logs" / "plot_toy_labels" / "plot_toy_labels.log").is_file()
    assert (results / "benchmarks" / "plot_toy_labels" / "plot_toy_labels.tsv").is_file()
    record = json.loads(
        (results / "provenance" / "figures" / "toy" / "labels.png.json").read_text()
    )
    assert record["rule"] == "plot_toy_labels"
    assert record["stage_version"] == 3  # the declared version
