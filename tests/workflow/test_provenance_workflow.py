"""Provenance and stage versions in a real run: every output has its record, a rerun of the same
code gives the same bytes (records included), and bumping one stage's version reruns exactly that
stage's jobs and the jobs downstream of them."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from vcrbench.files import io
from vcrbench.plan import paths
from vcrbench.plan.versions import stage, version

from .conftest import REPO, snakemake
from .test_workflow import dry_run, scheduled_jobs

#: What a run writes besides its outputs: folders, and the records of the model entries and the
#: dataset checked at the run's start (paths.CHECK_MODELS, CHECK_DATASET, written by no job).
NOT_OUTPUTS = ("logs", "benchmarks", "provenance")
RUN_RECORDS = (paths.CHECK_MODELS, paths.CHECK_DATASET)
#: The rules of a stage whose name is not a rule's.
STAGE_RULES = {"predict": ("predict_model",)}  # the tiny config's one inference job per model
#: What a copy of the workflow needs to run.
WORKFLOW_FILES = ("Snakefile", "rules", "workflow", "src", "config", "report", "envs")


def outputs(workdir: Path) -> list[Path]:
    results = workdir / "results"
    return sorted(
        p
        for p in results.rglob("*")
        if p.is_file()
        and p.relative_to(results).parts[0] not in NOT_OUTPUTS
        and p.relative_to(workdir).as_posix() not in RUN_RECORDS
    )


@pytest.mark.slow
def test_every_output_records_its_provenance(finished_run):
    files = outputs(finished_run)
    assert len(files) > 50
    rules = set()
    for path in files:
        rel = path.relative_to(finished_run).as_posix()
        sidecar = finished_run / paths.provenance(rel)
        assert sidecar.is_file(), f"{rel} has no provenance record"
        rec = json.loads(sidecar.read_text())
        assert rec.pop("output") == rel
        assert rec.pop("sha256") == io.file_sha256(path), rel  # what `make verify` checks
        assert rec["stage_version"] == version(stage(rec["rule"])), rel
        assert rec["config_hash"].startswith("sha256:")
        assert rec["vcrbench"] and rec["packages"]["torch"] and rec["packages"]["snakemake"]
        if path.suffix == ".parquet":
            assert io.read_provenance(path) == rec, rel
        rules.add(rec["rule"])
    assert {"generate_shard", "predict_model", "estimate_curves", "plot_curves"} <= rules


@pytest.mark.slow
def test_a_forced_rerun_gives_the_same_bytes_records_included(copy_run):
    config = copy_run / "config.yaml"
    results = copy_run / "results"
    before = {
        p: p.read_bytes()
        for p in results.rglob("*")
        if p.is_file() and p.relative_to(results).parts[0] not in ("logs", "benchmarks")
    }
    sidecar = copy_run / paths.provenance(paths.VCR_METRICS)
    os.utime(sidecar, (0, 0))
    # the estimates and the table made from them (the figures' reruns are the archive test's)
    proc = snakemake(
        copy_run, "--cores", "2", "--forcerun", "estimate_curves", "--until", "collect_metrics",
        configfile=config,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    ran = {r for r, _ in scheduled_jobs(proc.stdout + proc.stderr)}
    assert ran == {"estimate_curves", "collect_metrics"}, ran
    assert sidecar.stat().st_mtime > 0  # rewritten by the rerun
    changed = [str(p.relative_to(copy_run)) for p, data in before.items() if p.read_bytes() != data]
    assert changed == []


def workflow_copy(dest: Path, stage: str) -> Path:
    """The repository's workflow and library copied to ``dest`` with ``stage``'s version + 1."""
    dest.mkdir(parents=True)
    for name in WORKFLOW_FILES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / name)
    versions = dest / "src" / "vcrbench" / "plan" / "versions.py"
    text, n = re.subn(
        rf'^(    "{stage}": )(\d+),$',
        lambda m: f"{m.group(1)}{int(m.group(2)) + 1},",
        versions.read_text(),
        flags=re.MULTILINE,
    )
    assert n == 1, stage
    versions.write_text(text)
    return dest


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["predict", "coverage_table", "estimate_curves"])
def test_bumping_a_stage_version_reruns_it_and_what_depends_on_it(copy_run, tmp_path, stage):
    config = copy_run / "config.yaml"
    bumped = workflow_copy(tmp_path / "workflow", stage)
    env = {**os.environ, "PYTHONPATH": str(bumped / "src")}
    proc = snakemake(
        copy_run, "-n", "--cores", "2", configfile=config, env=env, snakefile=bumped / "Snakefile"
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    planned = scheduled_jobs(proc.stdout + proc.stderr)
    # what Snakemake itself plans when the stage's rules are forced: those jobs and their
    # dependants, and nothing upstream or beside them
    rules = STAGE_RULES.get(stage, (stage,))
    forced = scheduled_jobs(dry_run(copy_run, configfile=config, extra=("--forcerun", *rules)))
    assert sorted(map(repr, planned)) == sorted(map(repr, forced))
    planned_rules = {r for r, _ in planned}
    assert planned_rules & set(rules)
    assert not planned_rules & {"prepare_clean_set", "sample_manifest", "generate_shard"}
