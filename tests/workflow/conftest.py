"""Fixtures for running the workflow itself (Snakemake as a subprocess, in temporary folders)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from vcrbench.plan import cluster

REPO = Path(__file__).resolve().parents[2]
TINY = Path(__file__).with_name("tiny.yaml")


def snakemake_command(
    workdir: Path, *args: str, configfile: Path | None = None, snakefile: Path | None = None
) -> list[str]:
    """The command line that runs snakemake on the repository's Snakefile (or ``snakefile``) in
    ``workdir``."""
    return cluster.snakemake_command(
        snakefile or REPO / "Snakefile", workdir, *args, configfile=configfile
    )


def snakemake(
    workdir: Path,
    *args: str,
    configfile: Path | None = None,
    env=None,
    timeout=1800,
    snakefile: Path | None = None,
):
    """Run snakemake on the repository's Snakefile in ``workdir``; return the CompletedProcess."""
    cmd = snakemake_command(workdir, *args, configfile=configfile, snakefile=snakefile)
    run_env = dict(os.environ if env is None else env)
    run_env.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")
    return subprocess.run(cmd, capture_output=True, text=True, env=run_env, timeout=timeout)


def write_config(path: Path, base: Path = TINY, **changes) -> Path:
    """A copy of ``base`` with top-level keys replaced by ``changes``."""
    config = yaml.safe_load(base.read_text())
    config.update(changes)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory):
    """One complete run of the tiny config, shared by the tests that inspect or modify it.

    Tests that modify the run work on a copy (``copy_run``), so the order of tests does not matter.
    """
    workdir = tmp_path_factory.mktemp("tiny-run")
    config = write_config(workdir / "config.yaml")
    proc = snakemake(workdir, "--cores", "2", "--show-failed-logs", configfile=config)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
    return workdir


@pytest.fixture
def copy_run(finished_run, tmp_path):
    """A private copy of the finished run (results and Snakemake's metadata), same mtimes."""
    dest = tmp_path / "run"
    shutil.copytree(finished_run, dest, symlinks=True)
    return dest
