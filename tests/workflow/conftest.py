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


def config_error(path: Path) -> str:
    """What the workflow says of the config file ``path`` before it plans any job, found in this
    process: the Snakefile's own checks (rules/common.smk: :func:`vcrbench.plan.validate`, then
    the :class:`~vcrbench.plan.Plan`), with the words a run prints (``invalid config: ...``).
    Relative paths in the config are the working directory's, as in a run. Each kind of such
    failure keeps one test through Snakemake itself (test_workflow.py's three mistakes, the
    failed-job and dataset tests); ``test_config_error_is_what_the_snakefile_does`` ties this to
    rules/common.smk."""
    from vcrbench import plan

    config = yaml.safe_load(path.read_text())
    try:
        plan.validate(config)
        plan.Plan(config)
    except plan.ConfigError as exc:
        return f"invalid config: {exc}"
    raise AssertionError(f"{path}: the workflow takes this config")


def split_inference(**changes) -> dict:
    """The tiny config's ``inference`` block with each model's inference split into a job per set
    and group of shards (``predict_clean``, ``predict_group``, ``predict_imagenet_c``:
    ``model_job_max_images: 0``; the tiny config itself predicts a model in one job), and
    ``changes``."""
    inference = yaml.safe_load(TINY.read_text())["inference"]
    return {**inference, "model_job_max_images": 0, **changes}


def write_config(path: Path, base: Path = TINY, **changes) -> Path:
    """A copy of ``base`` with top-level keys replaced by ``changes``."""
    config = yaml.safe_load(base.read_text())
    config.update(changes)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


#: The environment of the shared run (:func:`finished_run`): a read-only $HOME and no cache
#: variable set, as the plain command meets them on a cluster (issue 22).
CACHE_VARIABLES = ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "MPLCONFIGDIR", "TORCH_HOME", "HF_HOME")


def run_environment(root: Path) -> dict:
    """The environment of a run whose $HOME is ``root/home`` and $TMPDIR ``root/tmp``, with no
    cache variable set (so nothing but the workflow's own settings keeps caches off $HOME)."""
    (root / "tmp").mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HOME=str(root / "home"), TMPDIR=str(root / "tmp"))
    for name in CACHE_VARIABLES:
        env.pop(name, None)
    return env


def _finish_tiny_run(root: Path) -> None:
    """The tiny config run from nothing in ``root/run``, with $HOME (``root/home``) read-only."""
    from tests.support.homes import read_only_home

    workdir = root / "run"
    workdir.mkdir(parents=True)
    config = write_config(workdir / "config.yaml")
    env = run_environment(root)
    with read_only_home(root / "home"):
        proc = snakemake(workdir, "--cores", "2", "--show-failed-logs", configfile=config, env=env)
    (root / "console.txt").write_text(proc.stdout + proc.stderr)  # what the user saw
    (root / "outcome.txt").write_text(
        "ok" if proc.returncode == 0 else proc.stdout[-6000:] + proc.stderr[-6000:]
    )


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory, worker_id):
    """One complete run of the tiny config per pytest run, shared by the tests that inspect or
    modify it, made with a read-only $HOME (``finished_run.parent / "home"``; the archive test
    checks nothing was written there). Under pytest-xdist the first worker to ask makes it and
    the others wait for it (a file lock in the run's shared temporary folder).

    Tests that modify the run work on a copy (``copy_run``, ``partial_copy``), so the order of
    tests does not matter.
    """
    from filelock import FileLock

    if worker_id == "master":  # no xdist: this session's own folder
        shared = tmp_path_factory.getbasetemp()
    else:  # the folder all workers of this pytest run share
        shared = tmp_path_factory.getbasetemp().parent
    root = shared / "tiny-run"
    with FileLock(str(shared / "tiny-run.lock")):
        if not (root / "outcome.txt").exists():
            _finish_tiny_run(root)
    outcome = (root / "outcome.txt").read_text()
    assert outcome == "ok", outcome
    return root / "run"


@pytest.fixture
def copy_run(finished_run, tmp_path):
    """A private copy of the finished run (results and Snakemake's metadata), same mtimes."""
    dest = tmp_path / "run"
    shutil.copytree(finished_run, dest, symlinks=True)
    return dest


#: What :func:`partial_copy` leaves out by default: one corruption's test sets (VCR and
#: ImageNet-C) and everything made from them alone (predictions, curves), so that a run in the
#: copy generates, predicts, estimates and draws again, as a run from nothing does after its first
#: stages, on half the tiny run's sets: the tables and figures over all corruptions are made again
#: too (their inputs are newer), the other corruption's own outputs stay as they are.
ONE_CORRUPTION = (
    "testsets/brightness",
    "imagenet-c/brightness",
    "predictions/efficientnet_lite0/brightness",
    "predictions/efficientnet_lite0/imagenet-c/brightness",
    "estimates/efficientnet_lite0/brightness",
)

#: What no partial copy keeps: jobs' logs and benchmarks (what a test waits for to see a stage
#: start must be the copy's own).
VOLATILE = ("logs", "benchmarks")


def partial_copy(finished_run: Path, dest: Path, drop=ONE_CORRUPTION, results=None) -> Path:
    """A copy of the finished run (Snakemake's metadata included, same mtimes) without the
    folders ``drop`` of its results and their provenance records, and without its logs and
    benchmarks: what a run had made before it reached those outputs. ``results`` (a folder)
    receives the copy's results instead of ``dest/results`` (e.g. a small file system mounted
    there)."""
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("results")
    shutil.copytree(finished_run, dest, symlinks=True, ignore=ignore, dirs_exist_ok=True)
    target = results or dest / "results"
    source = finished_run / "results"
    dropped = {*drop, *(f"provenance/{d}" for d in drop), *VOLATILE}

    def ignored(folder, names):
        rel = Path(folder).relative_to(source)
        return [n for n in names if (rel / n).as_posix() in dropped]

    shutil.copytree(source, target, symlinks=True, ignore=ignored, dirs_exist_ok=True)
    return dest


#: This folder's test files in the order the xdist workers take them (``--dist loadfile
#: --no-loadscope-reorder``: a file goes whole to the next free worker), the longest first so that
#: none of them starts last (seconds in one `make test` on this machine, 2026-11-28): the file
#: whose first test makes the shared run, then files that make their own runs (the other worker
#: takes them meanwhile), then those that start from the shared run; every other file follows in
#: collection order (the unit tests fill the tail).
SCHEDULE = (
    "test_workflow.py",  # 390, the shared run's 267 included
    "test_retrain_workflow.py",  # 350
    "test_zsl_workflow.py",  # 230
    "test_cluster.py",  # 200: the paper config's SLURM dry run
    "test_plan_cost.py",  # 160: the paper config's plan and dry run, shared by two tests
    "test_slurm_workflow.py",  # 400
    "test_faults_workflow.py",  # 370
    "test_stratified_workflow.py",  # 100
    "test_label_spaces_workflow.py",  # 170
    "test_defenses_workflow.py",  # 170
    "test_weights_download.py",  # 160
    "test_figures_workflow.py",  # 150
    "test_archive_workflow.py",  # 120
    "test_report_browser.py",  # 60: a report of the shared run, clicked through in Chromium
    "test_api_workflow.py",  # 85 to 120 (under load): the Python API on the shared run's test sets
    "test_provenance_workflow.py",  # 70
)


def pytest_collection_modifyitems(config, items):
    """This folder's files in :data:`SCHEDULE`'s order first, every other file after them as
    collected (the order is the same in every worker, as xdist requires)."""
    here = Path(__file__).parent
    rank = {here / name: i for i, name in enumerate(SCHEDULE)}
    items.sort(key=lambda item: rank.get(item.path, len(rank)))  # stable: files stay whole
