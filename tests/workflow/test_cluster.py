"""config/paper.yaml through the user's SLURM profile, installed as the README says, with stand-in
SLURM commands on PATH (tests/support/slurm_stubs.py): how many jobs a cluster run submits, and
that no --set-resources drops an inference job's GPU (issue 22). A dry run: nothing is submitted;
the jobs it plans are read from its output, group jobs included."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from tests.support import slurm_stubs
from tests.support.homes import read_only_home, written
from vcrbench import plan
from vcrbench.plan import cluster, cost, work
from vcrbench.plan import config as cfg

from .conftest import REPO, snakemake_command
from .test_workflow import scheduled_resources

#: The most submissions config/paper.yaml may make (issue 22: an admin accepts a few hundred).
MAX_SUBMISSIONS = 600


def paper_dry_run(tmp_path: Path, *extra: str) -> tuple[str, Path]:
    """The README's `snakemake --profile slurm --configfile config/paper.yaml`, dry, with the
    profile installed in a HOME that is then read-only; returns the output and the config used
    (paper.yaml with stand-ins for the files this machine lacks)."""
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import plan_cost
    finally:
        sys.path.pop(0)
    home = tmp_path / "home"
    (home / ".config" / "snakemake").mkdir(parents=True)
    shutil.copytree(REPO / "profiles" / "slurm", home / ".config" / "snakemake" / "slurm")
    work = tmp_path / "run"
    work.mkdir()
    config = plan_cost.absolute_paths(yaml.safe_load((REPO / "config" / "paper.yaml").read_text()))
    plan_cost.stand_ins(config, work)
    (work / "paper.yaml").write_text(yaml.safe_dump(config))
    log = slurm_stubs.install(tmp_path / "bin")
    env = slurm_stubs.environ(tmp_path / "bin", home)
    cmd = snakemake_command(
        work, "--profile", "slurm", "-n", *extra, configfile=work / "paper.yaml"
    )
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        env.pop(name, None)
    with read_only_home(home):
        before = written(home)
        proc = subprocess.run(
            cmd, cwd=work, env=env, capture_output=True, text=True, timeout=1800
        )
        assert written(home) == before  # nothing under $HOME (issue 27)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-5000:]
    assert "Using profiles slurm and workflow specific profile" in out, out[:2000]
    assert "sbatch" not in log.read_text()  # a dry run submits nothing
    return out, work / "paper.yaml"


@pytest.mark.slow
def test_paper_plan_submits_few_jobs_and_keeps_every_gpu(tmp_path):
    out, configfile = paper_dry_run(
        tmp_path,
        "--set-resources",
        "generate_shard:runtime=5",
        # a user's value written as Snakemake's expression of the attempt keeps growing on retries
        "predict_clean:mem_mb=9000*attempt",
    )
    subs = cost.parse_submissions(out, cluster.LOCAL_RULES)
    total = sum(subs["groups"].values()) + sum(subs["jobs"].values())
    assert total <= MAX_SUBMISSIONS, subs
    # generation and inference go in group jobs only; cheap rules run locally
    assert not set(subs["jobs"]) & {
        *cost.GENERATION_RULES,
        "predict_clean",
        "predict_group",
        "predict_imagenet_c",
        "estimate_curves",
        "collect_metrics",
        "plot_curves",
        "paper_tables",
    }, subs["jobs"]
    assert subs["groups"]["generate"] <= 70 and subs["groups"]["infer"] <= 100, subs["groups"]
    assert subs["local"]["fetch_weights"] == 19
    # --set-resources for another rule (or the same) leaves every GPU where the rules put it
    jobs = scheduled_resources(out)
    predict = [r for rule, _, r in jobs if rule.startswith("predict")]
    # 25 models: clean, 16 VCR sets (the paper's 14, motion and glass blur twice), 9 ImageNet-C
    assert len(predict) == 25 * (1 + 16 + 9), len(predict)
    assert all(r.get("gpu") == "1" for r in predict)
    assert all(r.get("gpu") == "1" for rule, _, r in jobs if rule == "finetune_model")
    assert {r["runtime"] for rule, _, r in jobs if rule == "generate_shard"} == {"5"}
    assert {r["mem_mb"] for rule, _, r in jobs if rule == "predict_clean"} == {"9000"}
    assert not any("gpu" in r for rule, _, r in jobs if rule.startswith("generate"))
    requests_near_the_plans_estimates(out, configfile)


def requests_near_the_plans_estimates(out: str, configfile: Path) -> None:
    """Job by job, the first attempt's time limit that Snakemake would submit is twice the
    plan's estimate for that job (vcrbench.plan.work: its own images and model), in whole
    minutes; the sums are what `make plan` prints side by side."""
    config = plan.load(configfile)
    clean = cfg.clean_set_size(config)
    compared: dict[str, list[float]] = {}
    for job in cost.parse_jobs(out):
        rule = job["rule"]
        if rule not in (*cost.GPU_RULES, *cost.GENERATION_RULES) or rule == "generate_shard":
            continue  # generate_shard's runtime was set on the command line above
        estimate = work.job_seconds(config, rule, SimpleNamespace(**job["wildcards"]), clean)
        requested = 60 * int(job["resources"]["runtime"])
        assert 2 * estimate <= requested < 2 * estimate + 60, (rule, job["wildcards"], estimate)
        compared.setdefault(rule, []).append(requested / estimate)
    assert set(compared) == {
        "predict_clean", "predict_group", "predict_imagenet_c", "finetune_model",
        "generate_imagenet_c", "generate_retrain_shard",
    }, sorted(compared)
    for rule, ratios in sorted(compared.items()):
        print(f"{rule}: {len(ratios)} jobs, requested/estimated {min(ratios):.2f}-{max(ratios):.2f}")
