"""The retraining stage as users run it: enabling it on a finished run adds only its own jobs, the
fine-tuned model is evaluated like any other, a killed fine-tuning resumes from its checkpoint,
and a pool that shares an image with the evaluation set stops the run naming the image."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from vcrbench.plan import paths

from .conftest import REPO, snakemake, snakemake_command, split_inference, write_config
from .test_workflow import dry_run, scheduled_jobs

pytestmark = pytest.mark.slow

BASE = "efficientnet_lite0"
RUN = "lite0_vcr"
# The first 6 embedded images (by id) are the evaluation set; two of the other three, labelled,
# are the pool.
EVALUATION = {"kind": "embedded", "limit": 6}
RETRAIN = {
    "runs": {
        RUN: {
            "base": BASE,
            "corruptions": ["gaussian_noise"],
            "n_samples": 16,
            "epochs": 3,
            "batch_size": 8,
        }
    },
    "pool": {"kind": "embedded", "include": ["skimage-rocket", "sklearn-china"]},
}
#: What the runs with retraining make: the fine-tuned weights, the metrics of both models, Table 3
#: (before and after retraining) and the two models' error consistency (the figures over all
#: models, which the fine-tuned model makes again too, are planned by the dry run below; their
#: rules run in the shared tiny run and the archive test).
TARGETS = (
    paths.fill(paths.TUNED_MODEL, run=RUN),  # a missing intermediate file alone reruns nothing
    paths.VCR_METRICS,
    f"{paths.PAPER_TABLES}/table3_retraining.csv",
    paths.MODEL_CONSISTENCY_FIGURE.format(ext="png"),
)
EVALUATION_STAGES = {
    "prepare_clean_set",
    "sample_manifest",
    "generate_shard",
    "generate_imagenet_c",
}


def tiny_config(path: Path, **changes) -> Path:
    return write_config(
        path,
        dataset=EVALUATION,
        corruptions={"gaussian_noise": {}},
        sampling={"mode": "parameter-uniform", "n_samples": 16, "shard_size": 8},
        imagenet_c={"enabled": False},
        # no human reference: the human stage (about a third of the tiny run's job time) is
        # the shared run's to test, not retraining's
        humans={"dnn_table": False, "references": {}, "conditions_table": False},
        # one job per set and group of shards (predict_clean, predict_group), as at paper scale
        inference=split_inference(),
        **changes,
    )


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """A run of a tiny config without retraining, up to its metrics table: what retraining is
    added to (the figures and tables over all models, which the fine-tuned model makes again,
    are made once, by the run with retraining)."""
    workdir = tmp_path_factory.mktemp("retrain-run")
    config = tiny_config(workdir / "config.yaml")
    target = paths.VCR_METRICS
    proc = snakemake(workdir, "--cores", "2", "--show-failed-logs", target, configfile=config)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
    return workdir


@pytest.fixture(scope="module")
def retrained(evaluated, tmp_path_factory):
    """The finished run with retraining switched on and run: (workdir, config, dry-run jobs)."""
    workdir = tmp_path_factory.mktemp("retrained") / "run"
    shutil.copytree(evaluated, workdir, symlinks=True)
    config = tiny_config(workdir / "config-retrain.yaml", retrain=RETRAIN)
    jobs = scheduled_jobs(dry_run(workdir, configfile=config))
    proc = snakemake(workdir, "--cores", "2", "--show-failed-logs", *TARGETS, configfile=config)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
    return workdir, config, jobs


def test_enabling_retraining_schedules_only_its_own_jobs(retrained):
    _, _, jobs = retrained
    rules = [r for r, _ in jobs]
    assert not EVALUATION_STAGES & set(rules), rules
    for rule in ("prepare_retrain_pool", "check_pool_overlap", "sample_retrain_manifest"):
        assert rules.count(rule) == 1, rules
    assert rules.count("generate_retrain_shard") == 2 and rules.count("finetune_model") == 1
    for rule, wildcards in jobs:
        if rule.startswith("predict") or rule == "estimate_curves":
            assert wildcards["model"] == RUN, (rule, wildcards)
    assert {"predict_clean", "predict_group", "estimate_curves", "collect_metrics"} <= set(rules)


def test_fine_tuned_model_is_trained_and_evaluated(retrained):
    workdir, _, _ = retrained
    out = workdir / "results" / "retrain"
    assert (out / "pool" / "disjoint.json").is_file()
    history = pd.read_csv(out / RUN / "training_log.csv")
    assert history["epoch"].tolist() == [1, 2, 3] and (history["n_images"] == 16).all()
    assert (out / RUN / "training_log.png").read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in (out / RUN / "checkpoints").iterdir()) == [
        "epoch-001.pt",
        "epoch-002.pt",
        "epoch-003.pt",
    ]
    log = (workdir / "results" / "logs" / "finetune_model" / f"{RUN}.log").read_text()
    assert "epoch 3/3" in log  # the progress bar went to the job's log
    metrics = pd.read_csv(workdir / "results" / "tables" / "vcr_metrics.csv")
    assert set(metrics["model"]) == {BASE, RUN}
    tuned = metrics[metrics["model"] == RUN]
    assert tuned["R_a"].between(0, 1).all() and tuned["R_p"].between(0, 1).all()
    table3 = pd.read_csv(workdir / TARGETS[2])
    assert RUN in table3.to_string() and BASE in table3.to_string()
    assert (workdir / TARGETS[3]).read_bytes()[:4] == b"\x89PNG"
    # the training images came from the pool only
    shard = pd.read_parquet(
        out / RUN / "trainset" / "gaussian_noise" / "shard-00000.parquet", columns=["image_id"]
    )
    assert set(shard["image_id"]) <= {"skimage-rocket", "sklearn-china"}


def test_a_killed_fine_tuning_resumes_from_its_last_checkpoint(retrained, tmp_path):
    """In a copy of the run with retraining, as before its first fine-tuning (no weights, no
    checkpoints): the fine-tuning killed after its first epoch, then the same command resumes
    from the last checkpoint and ends with the weights of the uninterrupted run, byte for byte
    (what is predicted from the same weights is the same: the determinism tests' to check)."""
    source, config, _ = retrained
    workdir = tmp_path / "run"
    shutil.copytree(source, workdir, symlinks=True)
    run_dir = workdir / "results" / "retrain" / RUN
    reference = (run_dir / "model.pt").read_bytes()
    (run_dir / "model.pt").unlink()
    shutil.rmtree(run_dir / "checkpoints")
    tuned = paths.fill(paths.TUNED_MODEL, run=RUN)

    cmd = snakemake_command(workdir, "--cores", "2", tuned, configfile=config)
    env = {**os.environ, "NO_ALBUMENTATIONS_UPDATE": "1"}
    output = workdir / "killed-run.log"
    with output.open("w") as fh:
        proc = subprocess.Popen(
            cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    first = run_dir / "checkpoints" / "epoch-001.pt"
    try:
        deadline = time.monotonic() + 600
        while not first.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert first.exists(), output.read_text()[-4000:]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # snakemake and its job, as a lost node would
        proc.wait()
    left = sorted(
        p.name for p in (run_dir / "checkpoints").iterdir() if p.name.startswith("epoch-")
    )
    assert "epoch-003.pt" not in left and not (run_dir / "model.pt").exists()

    unlock = snakemake(workdir, "--unlock", configfile=config)
    assert unlock.returncode == 0, unlock.stderr[-3000:]
    rerun = snakemake(workdir, "--cores", "2", "--show-failed-logs", tuned, configfile=config)
    assert rerun.returncode == 0, rerun.stdout[-6000:] + rerun.stderr[-6000:]
    log = (workdir / "results" / "logs" / "finetune_model" / f"{RUN}.log").read_text()
    assert f"resuming after epoch {len(left)}" in log, log[-3000:]
    assert (run_dir / "model.pt").read_bytes() == reference


def test_rerun_after_retraining_has_nothing_to_do(retrained):
    workdir, config, _ = retrained
    out = dry_run(workdir, configfile=config, extra=TARGETS)
    assert scheduled_jobs(out) == []


def test_a_pool_image_that_is_an_evaluation_image_stops_the_run(evaluated, tmp_path):
    """skimage-chelsea (an evaluation image) hidden in a folder pool as cat.png."""
    from vcrbench.datasets.loading import read_embedded_dataset

    workdir = tmp_path / "run"
    shutil.copytree(evaluated, workdir, symlinks=True)
    paths = read_embedded_dataset().set_index("image_id")["path"]
    pool = tmp_path / "pool"
    pool.mkdir()
    shutil.copy(paths["skimage-chelsea"], pool / "cat.png")
    shutil.copy(paths["skimage-rocket"], pool / "rocket.jpg")
    (pool / "labels.csv").write_text("file,label\ncat.png,281\nrocket.jpg,657\n")
    retrain = {
        **RETRAIN,
        "pool": {"kind": "folder", "path": str(pool), "labels": str(pool / "labels.csv")},
    }
    config = tiny_config(workdir / "config-overlap.yaml", retrain=retrain)
    proc = snakemake(workdir, "--cores", "2", "--show-failed-logs", configfile=config)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "cat.png = skimage-chelsea" in out, out[-4000:]
    assert not (
        workdir / "results" / "retrain" / RUN
    ).exists()  # nothing generated, nothing trained
    assert not (workdir / "results" / "retrain" / "pool" / "disjoint.json").exists()


def test_retrain_config_errors_stop_before_any_job(tmp_path):
    bad = {"runs": {RUN: {"base": "efficientnet_lite9", "corruptions": ["gaussian_noise"]}}}
    config = tiny_config(tmp_path / "bad.yaml", retrain=bad)
    proc = snakemake(tmp_path, "--cores", "1", configfile=config)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and f"retrain.runs.{RUN}.base" in out, out[-3000:]
    assert not (tmp_path / "results").exists()


def test_demo_config_plans_the_retraining_stage(tmp_path):
    jobs = scheduled_jobs(dry_run(tmp_path, configfile=REPO / "config" / "retrain-demo.yaml"))
    rules = {r for r, _ in jobs}
    assert {"prepare_retrain_pool", "check_pool_overlap", "finetune_model"} <= rules
    demo = yaml.safe_load((REPO / "config" / "retrain-demo.yaml").read_text())
    tuned = next(iter(demo["retrain"]["runs"]))
    assert any(r == "predict_group" and w["model"] == tuned for r, w in jobs)
