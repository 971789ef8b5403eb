"""The workflow as users run it: config validation, lint, a tiny real run, reruns, SLURM."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pandas as pd
import pytest
import yaml

from .conftest import REPO, TINY, snakemake, write_config

# --------------------------------------------------------------------------- dry-run parsing

JOB_RE = re.compile(r"^(?:local)?rule (\w+):\n((?:[ \t]+.*\n?)*)", re.MULTILINE)


def scheduled_jobs(dry_run_output: str) -> list[tuple[str, dict[str, str]]]:
    """(rule, wildcards) of every job a dry run would execute."""
    jobs = []
    for m in JOB_RE.finditer(dry_run_output):
        wildcards = {}
        for line in m.group(2).splitlines():
            line = line.strip()
            if line.startswith("wildcards:"):
                for part in line[len("wildcards:") :].split(","):
                    key, _, value = part.strip().partition("=")
                    wildcards[key] = value
        jobs.append((m.group(1), wildcards))
    return jobs


def dry_run(workdir, configfile=None, extra=()):
    proc = snakemake(workdir, "-n", "--cores", "2", *extra, configfile=configfile)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return proc.stdout + proc.stderr


# --------------------------------------------------------------------------- fast checks


def test_lint_has_no_findings(tmp_path):
    proc = snakemake(tmp_path, "--lint", configfile=TINY)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "Lints for" not in out, out[-4000:]


def test_shipped_default_dry_run_plans_every_stage(tmp_path):
    out = dry_run(tmp_path)  # config/config.yaml, the embedded default
    rules = {rule for rule, _ in scheduled_jobs(out)}
    expected = {
        "prepare_clean_set",
        "sample_manifest",
        "generate_shard",
        "generate_imagenet_c",
        "predict_clean",
        "predict_group",
        "predict_imagenet_c",
        "estimate_curves",
        "collect_metrics",
        "coverage_table",
    }
    assert expected <= rules, sorted(expected - rules)


def test_paper_config_validates_and_plans(tmp_path):
    """config/paper.yaml plans the full experiment once its dataset folder exists."""
    config = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    val = tmp_path / "ILSVRC2012_val"
    val.mkdir()
    config["dataset"]["path"] = str(val)
    train = tmp_path / "ILSVRC2012_train"
    train.mkdir()
    config["retrain"]["pool"]["path"] = str(train)
    # Weights that are not on this machine stop a real run, naming the file; a dry run needs
    # only that the files exist.
    for entry in config["models"].values():
        if entry.get("checkpoint"):
            weights = tmp_path / entry["checkpoint"]
            weights.parent.mkdir(parents=True, exist_ok=True)
            weights.touch()
    path = tmp_path / "paper.yaml"
    path.write_text(yaml.safe_dump(config))
    out = dry_run(tmp_path, configfile=path)
    jobs = scheduled_jobs(out)
    corruptions = {w["corruption"] for r, w in jobs if r == "sample_manifest"}
    assert len(corruptions) == 14
    shards = [w for r, w in jobs if r == "generate_shard"]
    assert len(shards) == 14 * 50  # 50,000 samples per corruption in shards of 1,000
    finetuned = {w["run"] for r, w in jobs if r == "finetune_model"}
    assert len(finetuned) == 6


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"corruptions": {"gaussian_noize": {}}}, "corruptions.gaussian_noize"),
        ({"models": {"m": {"source": "no-such-source", "id": "x"}}}, "models.m"),
        ({"sampling": {"n_samples": "many", "shard_size": 8}}, "sampling.n_samples"),
        ({"dataset": {"kind": "folder", "path": "/no/such/folder", "labels": "x.csv"}}, "dataset.path"),
    ],
    ids=["unknown-corruption", "unknown-model-source", "wrong-type", "missing-dataset-path"],
)
def test_config_errors_stop_before_any_job(tmp_path, changes, key):
    config = write_config(tmp_path / "bad.yaml", **changes)
    proc = snakemake(tmp_path, "--cores", "1", configfile=config)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert key in out, out[-3000:]
    assert not (tmp_path / "results").exists()


# --------------------------------------------------------------------------- a real run


@pytest.mark.slow
def test_end_to_end_outputs(finished_run):
    tables = finished_run / "results" / "tables"
    coverage = pd.read_csv(tables / "coverage.csv")
    assert {"corruption", "source", "n_images", "coverage"} <= set(coverage.columns)
    assert set(coverage["corruption"]) == {"gaussian_noise", "brightness"}
    assert set(coverage["source"]) == {"vcr", "imagenet-c"}
    assert coverage["coverage"].between(0, 1).all()

    metrics = pd.read_csv(tables / "vcr_metrics.csv")
    for column in ("model", "corruption", "R_a", "R_p", "HMRI_a", "MRSI_a", "HMRI_p", "MRSI_p"):
        assert column in metrics.columns
    assert set(metrics["model"]) == {"efficientnet_lite0"}
    assert metrics["R_a"].between(0, 1).all() and metrics["R_p"].between(0, 1).all()
    # gaussian_noise has a human reference through the noise class; brightness has none.
    noise = metrics[metrics["corruption"] == "gaussian_noise"]
    bright = metrics[metrics["corruption"] == "brightness"]
    assert noise["HMRI_a"].notna().any()
    assert bright["HMRI_a"].isna().all()

    figures = list((finished_run / "results" / "figures").rglob("*"))
    assert any(f.suffix == ".png" for f in figures) and any(f.suffix == ".pdf" for f in figures)


@pytest.mark.slow
def test_rerun_has_nothing_to_do(copy_run):
    out = dry_run(copy_run, configfile=copy_run / "config.yaml")
    assert scheduled_jobs(out) == []
    assert "Nothing to be done" in out


@pytest.mark.slow
def test_deleted_shard_regenerates_alone_and_identically(copy_run):
    config = copy_run / "config.yaml"
    shard = copy_run / "results" / "testsets" / "gaussian_noise" / "shard-00001.parquet"
    group = copy_run / "results" / "predictions" / "efficientnet_lite0" / "gaussian_noise" / "group-00000.parquet"
    before = {p: p.read_bytes() for p in (shard, group, copy_run / "results/tables/vcr_metrics.csv")}
    shard.unlink()

    jobs = scheduled_jobs(dry_run(copy_run, configfile=config))
    generated = [w for r, w in jobs if r in ("generate_shard", "sample_manifest", "prepare_clean_set")]
    assert generated == [{"corruption": "gaussian_noise", "shard": "00001"}]
    predicted = [w for r, w in jobs if r.startswith("predict")]
    assert predicted == [{"model": "efficientnet_lite0", "corruption": "gaussian_noise", "group": "00000"}]
    # Another corruption's jobs rerun only where they read a table over all corruptions (the
    # metrics and Δv-histogram tables are rebuilt); none of its own data (test set, predictions,
    # curves) is recomputed.
    other = {r for r, w in jobs if w.get("corruption") == "brightness"}
    assert other <= {"plot_hmri_mrsi", "plot_imagenet_c_vs_vcr", "plot_dv_histograms"}, other

    proc = snakemake(copy_run, "--cores", "2", configfile=config)
    assert proc.returncode == 0, proc.stderr[-4000:]
    for path, data in before.items():
        assert path.read_bytes() == data, f"{path} differs after regeneration"


@pytest.mark.slow
def test_adding_a_model_reruns_only_that_model(copy_run):
    config = yaml.safe_load((copy_run / "config.yaml").read_text())
    config["models"]["efficientnet_lite1"] = {
        "source": "efficientnet-lite-pypi",
        "id": "tf_efficientnet_lite1",
        "family": "supervised",
    }
    path = copy_run / "config-two-models.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=True))  # reordered keys change nothing
    jobs = scheduled_jobs(dry_run(copy_run, configfile=path))
    rules = [r for r, _ in jobs]
    assert not {"prepare_clean_set", "sample_manifest", "generate_shard", "generate_imagenet_c"} & set(rules)
    for rule, wildcards in jobs:
        if rule.startswith("predict") or rule == "estimate_curves":
            assert wildcards["model"] == "efficientnet_lite1", (rule, wildcards)
    assert "predict_clean" in rules and "predict_group" in rules


@pytest.mark.slow
def test_report_is_one_self_contained_html(copy_run):
    report = copy_run / "report.html"
    proc = snakemake(copy_run, "--report", str(report), configfile=copy_run / "config.yaml")
    assert proc.returncode == 0, proc.stderr[-4000:]
    html = report.read_text(errors="replace")
    assert "<html" in html.lower() and len(html) > 10_000


# --------------------------------------------------------------------------- SLURM


@pytest.mark.slow
@pytest.mark.slurm
def test_slurm_profile_runs_the_workflow(tmp_path):
    from tests.support.slurm import SlurmUnavailable, start_cluster

    try:
        cluster = start_cluster(tmp_path / "slurm")
    except SlurmUnavailable as exc:
        if os.geteuid() != 0:
            pytest.skip(f"cannot run a SLURM cluster here: {exc}")
        raise
    try:
        workdir = tmp_path / "run"
        workdir.mkdir()
        config = write_config(
            workdir / "config.yaml",
            corruptions={"brightness": {}},
            sampling={"mode": "parameter-uniform", "n_samples": 8, "shard_size": 8},
            imagenet_c={"enabled": False},
        )
        proc = snakemake(
            workdir,
            "--profile",
            str(REPO / "profiles" / "slurm"),
            # This test cluster has no accounting database: query job states with squeue, and
            # submit without an account. Everything else comes from the shipped profile.
            "--slurm-status-command",
            "squeue",
            "--slurm-no-account",
            "--slurm-init-seconds-before-status-checks",
            "1",
            "--seconds-between-status-checks",
            "2",
            configfile=config,
            env=cluster.env,
        )
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, out[-6000:]
        assert (workdir / "results" / "tables" / "vcr_metrics.csv").is_file()

        job_ids = dict(
            (m.group(2), m.group(1))
            for m in re.finditer(r"SLURM jobid (\d+).*?rule_(\w+?)/", out)
        )
        assert job_ids, out[-3000:]
        for rule in ("predict_clean", "predict_group"):
            assert rule in job_ids, (rule, sorted(job_ids))
            info = subprocess.run(
                ["scontrol", "show", "job", job_ids[rule]],
                capture_output=True,
                text=True,
                env=cluster.env,
            ).stdout
            assert "Partition=gpu" in info, info
            assert "gpu" in info.split("TresPerJob=")[-1] or "gres/gpu" in info, info
        assert "generate_shard" in job_ids
        info = subprocess.run(
            ["scontrol", "show", "job", job_ids["generate_shard"]],
            capture_output=True,
            text=True,
            env=cluster.env,
        ).stdout
        assert "Partition=cpu" in info, info
    finally:
        cluster.stop()
        shutil.rmtree(tmp_path / "slurm" / "state", ignore_errors=True)
