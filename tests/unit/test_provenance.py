"""Provenance: what every output records of the code, software and job that made it
(vcrbench.files.provenance), in Parquet metadata and in the workflow's sidecars
(vcrbench.plan.job)."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

import vcrbench
from tests.support.jobs import fake_job
from vcrbench.files import io, provenance
from vcrbench.plan import job, paths

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
FRAME = pd.DataFrame({"a": np.arange(3), "b": [0.5, 1.5, 2.5]})


def test_record_names_the_code_and_the_software():
    rec = provenance.record()
    assert rec["vcrbench"] == vcrbench.__version__
    assert set(rec["packages"]) == set(provenance.PACKAGES)
    assert rec["packages"]["numpy"] == np.__version__
    assert rec["packages"]["pandas"] == pd.__version__
    assert {"rule", "stage_version", "config_hash"} <= set(rec)
    assert rec["rule"] is None  # not inside a workflow job
    # nothing that changes from run to run or machine to machine
    text = json.dumps(rec).lower()
    assert "time" not in text and "host" not in text and "date" not in text


@needs_git
def test_git_commit_of_a_checkout_and_its_dirty_state(tmp_path):
    pkg = tmp_path / "repo" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("x = 1\n")

    def git(*args):
        return subprocess.run(
            ["git", "-C", str(tmp_path / "repo"), *args],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

    git("init", "-q")
    git("add", "pkg/__init__.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    assert provenance.git_state(pkg) == (git("rev-parse", "HEAD"), False)
    (pkg / "__init__.py").write_text("x = 2\n")
    assert provenance.git_state(pkg) == (git("rev-parse", "HEAD"), True)
    (pkg / "untracked.txt").write_text("not code")  # untracked files do not count
    (pkg / "__init__.py").write_text("x = 1\n")
    assert provenance.git_state(pkg)[1] is False


@needs_git
def test_no_commit_outside_a_checkout_or_for_untracked_code(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    assert provenance.git_state(pkg) == (None, None)
    # a package inside a repository that does not track it (an ignored virtualenv, say)
    subprocess.run(["git", "-C", str(tmp_path), "init", "-q"], check=True)
    assert provenance.git_state(pkg) == (None, None)


def test_no_commit_without_git(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no git executable on the path
    assert provenance.git_state() == (None, None)


def test_config_hash_is_canonical():
    a = provenance.config_hash({"version": 1, "settings": {"x": 1, "y": [1, 2]}})
    b = provenance.config_hash({"settings": {"y": [1, 2], "x": 1}, "version": 1})
    assert a == b and a.startswith("sha256:") and len(a) == len("sha256:") + 64
    assert provenance.config_hash({"version": 2, "settings": {"x": 1, "y": [1, 2]}}) != a
    assert provenance.config_hash({"version": 1, "settings": {"x": 1, "y": [2, 1]}}) != a


def test_parquet_files_carry_the_record_and_the_job(tmp_path):
    io.write_parquet(FRAME, tmp_path / "plain.parquet", metadata={"k": 1})
    plain = io.read_provenance(tmp_path / "plain.parquet")
    assert plain == json.loads(json.dumps(provenance.record()))
    assert io.read_metadata(tmp_path / "plain.parquet") == {"k": 1}  # the stage's own, apart

    params = {"version": 3, "settings": {"n": 5}}
    with provenance.job("estimate_curves", 3, params):
        io.write_parquet(FRAME, tmp_path / "job.parquet")
    rec = io.read_provenance(tmp_path / "job.parquet")
    assert rec["rule"] == "estimate_curves" and rec["stage_version"] == 3
    assert rec["config_hash"] == provenance.config_hash(params)
    assert provenance.record()["rule"] is None  # the job ended
    # the same job writing the same data gives the same bytes
    with provenance.job("estimate_curves", 3, params):
        io.write_parquet(FRAME, tmp_path / "again.parquet")
    assert (tmp_path / "again.parquet").read_bytes() == (tmp_path / "job.parquet").read_bytes()


def test_a_job_writes_a_sidecar_per_output(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    outputs = ["results/tables/x.csv", "results/estimates/m/c/metrics.parquet"]
    params = {"version": 2, "settings": {"a": 1}}
    with job.run(fake_job(outputs, params)):
        io.write_csv(FRAME, outputs[0])
        io.write_parquet(FRAME, outputs[1])
    for output in outputs:
        sidecar = tmp_path / paths.provenance(output)
        rec = json.loads(sidecar.read_text())
        assert rec.pop("output") == output
        assert rec["rule"] == "collect_metrics" and rec["stage_version"] == 2
        assert rec["config_hash"] == provenance.config_hash(params)
    assert (tmp_path / "results/provenance/tables/x.csv.json").is_file()
    parquet = io.read_provenance(outputs[1])
    assert parquet == {k: v for k, v in rec.items() if k not in ("output", "sha256")}
    assert rec["sha256"] == io.file_sha256(outputs[1])
    assert (tmp_path / "results/logs/r/x.log").is_file()


def test_a_failed_job_writes_no_sidecar(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with (
        pytest.raises(RuntimeError, match="boom"),
        job.run(fake_job(["results/tables/y.csv"], {"version": 1})),
    ):
        raise RuntimeError("boom")
    assert not (tmp_path / "results" / "provenance").exists()
    assert "boom" in (tmp_path / "results/logs/r/x.log").read_text()


def test_sidecar_paths():
    assert paths.provenance("results/tables/vcr_metrics.csv") == (
        "results/provenance/tables/vcr_metrics.csv.json"
    )
    assert paths.provenance("elsewhere/a.png") == "results/provenance/elsewhere/a.png.json"
