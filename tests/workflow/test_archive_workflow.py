"""A run that writes nothing under $HOME, and every figure and table rebuilt from a copy of its
results/ alone (issue 22): fresh mtimes, no .snakemake/, no generation, inference or estimation,
byte-identical figures and tables (so a regeneration of every figure and table rule gives the same
bytes: the figures tests' own regeneration test was merged into this one)."""

from __future__ import annotations

import shutil

import pytest

from tests.support.homes import read_only_home, written
from vcrbench.plan import cluster

from .conftest import CACHE_VARIABLES, REPO, run_environment, snakemake
from .test_figures_workflow import FIGURE_RULES, NOT_IN_TINY
from .test_workflow import scheduled_jobs


def files(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_read_only_home_then_figures_and_tables_from_a_copied_results_folder(
    finished_run, tmp_path
):
    """The plain command, as typed (no `make`, no cache variable set; the shared run,
    tests/workflow/conftest.py): Snakemake's source cache and every job's caches go under
    $TMPDIR (profiles/default's `shared-fs-usage`, vcrbench.plan.cluster.job_environment),
    never under a read-only $HOME."""
    root = finished_run.parent
    home, env = root / "home", run_environment(root)
    for name in CACHE_VARIABLES:
        assert name not in env
    assert "XDG_CACHE_HOME" not in (REPO / "Makefile").read_text()
    assert written(home) == []
    assert (finished_run / "results" / "weights" / "efficientnet_lite0.json").is_file()  # fetched

    # the rebuild from a copy, with a read-only $HOME of its own
    env = run_environment(tmp_path)
    with read_only_home(tmp_path / "home"):
        figures_from_a_copy(finished_run, tmp_path / "archive", env)
        assert written(tmp_path / "home") == []


def figures_from_a_copy(run, archive, env):
    """Copy ``run``'s results/ (new mtimes, no .snakemake/), rebuild every figure and table from
    it alone, and check they are the run's, byte for byte."""
    config = run / "config.yaml"
    shutil.copytree(run / "results", archive / "results", copy_function=shutil.copy)
    shutil.copy(config, archive / "config.yaml")
    args = cluster.archive_args()
    proc = snakemake(
        archive, "-n", "--cores", "2", *args, configfile=archive / "config.yaml", env=env
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    planned = {rule for rule, _ in scheduled_jobs(proc.stdout + proc.stderr)}
    assert planned and planned <= set(cluster.ARCHIVE_RULES), sorted(planned)
    assert {"plot_curves", "collect_metrics", "paper_tables"} <= planned
    # every figure and table rule the run has: two regenerations give the same bytes
    assert FIGURE_RULES - NOT_IN_TINY - {"paper_figures", "all"} <= planned

    before = {d: files(run / "results" / d) for d in ("figures", "tables")}
    for d in before:  # rebuilt, not kept
        shutil.rmtree(archive / "results" / d)
    proc = snakemake(archive, "--cores", "2", *args, configfile=archive / "config.yaml", env=env)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    for d, original in before.items():
        rebuilt = files(archive / "results" / d)
        assert set(rebuilt) == set(original), (d, set(original) ^ set(rebuilt))
        differ = sorted(str(k) for k in original if rebuilt[k] != original[k])
        assert not differ, (d, differ)
