"""scripts/plan_cost.py as a user runs it: its jobs are Snakemake's, and paper.yaml plans."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from vcrbench import plan

from .conftest import REPO, TINY, snakemake
from .test_workflow import scheduled_jobs, scheduled_resources

SCRIPT = REPO / "scripts" / "plan_cost.py"


def plan_cost(*args: str) -> str:
    env = {**os.environ, "NO_ALBUMENTATIONS_UPDATE": "1"}
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=600
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def section(text: str, title: str) -> list[str]:
    lines = text.split(f"## {title}", 1)[1].split("\n## ", 1)[0].strip().splitlines()
    return lines[1:]  # without the table's header


def jobs_table(text: str) -> dict[str, int]:
    rows = (line.split() for line in section(text, "Jobs per rule"))
    return {r[0]: int(r[1]) for r in rows if len(r) == 2 and r[1].isdigit() and r[0] != "total:"}


def test_tiny_plan_has_the_dry_runs_jobs_and_the_configs_images(tmp_path):
    out = plan_cost("--configfile", str(TINY), "--json", str(tmp_path / "plan.json"))
    proc = snakemake(tmp_path, "-n", "--cores", "1", configfile=TINY)
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected = Counter(rule for rule, _ in scheduled_jobs(proc.stdout + proc.stderr))
    assert jobs_table(out) == dict(expected)
    doc = json.loads((tmp_path / "plan.json").read_text())
    assert {r["rule"]: r["jobs"] for r in doc["jobs"]} == dict(expected)
    totals = {r["what"]: r["value"] for r in doc["totals"]}
    assert totals["clean images"] == 10  # the embedded set
    assert totals["generated images (VCR + ImageNet-C)"] == 2 * 24 + 2 * 5 * 3
    assert totals["images predicted per model"] == 10 + 2 * 24 + 2 * 5 * 3
    # Core-hours are the images times the checked-in per-image figures.
    figures = json.loads(
        (REPO / "src" / "vcrbench" / "data" / "planning" / "generation.json").read_text()
    )
    ms = {c: figures["corruptions"][c]["ms_per_image"] for c in ("gaussian_noise", "brightness")}
    hours = sum((24 + 15) * ms[c] for c in ms) / 3.6e6
    assert totals["CPU core-hours, generation"] == pytest.approx(hours)


@pytest.fixture(scope="module")
def paper_plan(tmp_path_factory):
    """`make plan CONFIG=config/paper.yaml`, its dry-run folder kept: (the plan's output, the
    folder with the config it planned and Snakemake's dry-run output), for this file's tests
    (one dry run of the paper config: about 80 s here)."""
    keep = tmp_path_factory.mktemp("paper-plan")
    out = plan_cost("--configfile", str(REPO / "config" / "paper.yaml"), "--keep", str(keep))
    return out, keep


@pytest.mark.slow  # the paper config's dry run: `make test`, not test-fast
def test_paper_config_plans_with_stand_ins(paper_plan):
    out, _ = paper_plan
    jobs = jobs_table(out)
    assert jobs["generate_shard"] == 16 * 50  # the paper's 14, motion and glass blur twice
    assert "stand-ins for the dry run" in out
    totals = section(out, "Totals")
    assert any(line.split()[-1] != "unknown" and "GPU-hours" in line for line in totals)
    # Models whose architecture has no published rate are named, not guessed.
    assert "no published throughput for: AlexNet" in out
    # Issue 22: few submissions; issue 27: start-up counted as the executor runs jobs (a
    # Snakemake start per job, a group's members too, and per submission): 11.3% of the compute
    values = {line.rsplit(None, 1)[0].strip(): line.split()[-1] for line in totals if line.strip()}
    submissions = int(values["cluster submissions"].replace(",", ""))
    assert submissions <= 600
    # the README's cluster figures are this plan's
    readme = (REPO / "README.md").read_text()
    said = [int(n.replace(",", "")) for n in re.findall(r"([\d,]+) submissions", readme)]
    assert said and set(said) == {submissions}, said
    (total,) = [int(x.split()[1]) for x in section(out, "Jobs per rule") if x.startswith("total:")]
    pairs = re.findall(r"([\d,]+) jobs,\s+[\d,]+ submissions", readme)
    assert [int(n.replace(",", "")) for n in pairs] == [total], pairs
    # no checkpoint file stood in: fetch_weights downloads them (docs/models.md)
    stood_in = next(line for line in out.splitlines() if "stand-ins for the dry run" in line)
    assert "checkpoint" not in stood_in, stood_in
    assert 10 < float(values["GPU start-up overhead, % of compute"]) <= 15
    # issue 27: requested and estimated GPU-hours side by side, requests at most ~2x the work
    estimated = float(values["GPU-hours, total: estimated per job (start-up + images)"])
    requested = float(values["GPU-hours, total: requested (first attempts)"])
    assert estimated < requested <= 3 * estimated
    assert "## First-attempt requests against the plan's estimate" in out
    assert float(values["GPU-hours, fine-tuning"]) > 0
    assert "## Start-up overhead" in out and "reads_gib" in out


@pytest.mark.slow  # the paper config's dry run: `make test`, not test-fast
def test_paper_config_validates_and_plans(paper_plan, monkeypatch):
    """config/paper.yaml plans the full experiment once its dataset folder exists (the plan's
    dry run, with its stand-ins for the dataset and the retraining pool), fetching every model's
    weights (the 13 checkpoint files, not on this machine, from their urls: none is stood in);
    no generation job handles more than one shard, and every job's memory and time grow with
    its attempt."""
    _, workdir = paper_plan
    path = workdir / "config.yaml"
    config = yaml.safe_load(path.read_text())
    assert Path(config["dataset"]["path"]).is_dir()
    assert Path(config["retrain"]["pool"]["path"]).is_dir()
    out = (workdir / "dry-run.txt").read_text()
    jobs = scheduled_jobs(out)
    fetched = {w["model"] for r, w in jobs if r == "fetch_weights"}
    assert fetched == set(config["models"]) and len(fetched) == 19
    checkpoints = [e for e in config["models"].values() if e.get("checkpoint")]
    assert len(checkpoints) == 13 and all(e["url"].startswith("https://") for e in checkpoints)
    assert not any((workdir / e["checkpoint"]).exists() for e in checkpoints)
    corruptions = {w["corruption"] for r, w in jobs if r == "sample_manifest"}
    assert len(corruptions) == 16  # the paper's 14, motion and glass blur with both functions
    shards = [w for r, w in jobs if r == "generate_shard"]
    assert len(shards) == 16 * 50  # 50,000 samples per corruption in shards of 1,000
    finetuned = {w["run"] for r, w in jobs if r == "finetune_model"}
    assert len(finetuned) == 6

    # ImageNet-C: 50,000 images x 5 severities per corruption in shards of 1,000 samples, one
    # job each (testset.generate_imagenet_c_shard writes samples k*1000 .. (k+1)*1000 - 1)
    size = config["sampling"]["shard_size"]
    imagenet_c = [w for r, w in jobs if r == "generate_imagenet_c"]
    per_set = {c: sum(w["corruption"] == c for w in imagenet_c) for c in corruptions}
    with_sets = {c: n for c, n in per_set.items() if n}
    assert len(with_sets) == 9 and set(with_sets.values()) == {5 * 50_000 // size}
    generating = {"generate_shard", "generate_imagenet_c", "generate_retrain_shard"}
    assert all("shard" in w for r, w in jobs if r in generating)
    # a model loads once per group: shards_per_job x 1,000 images (25,000 in paper.yaml)
    groups = [w for r, w in jobs if r == "predict_imagenet_c" and w["model"] == "dinov2_giant"]
    assert len(groups) == 9 * 250 // config["inference"]["shards_per_job"]

    # Resources: what Snakemake gives each job at its first attempt is what the plan computes,
    # and the plan's functions give more at the second attempt, for every rule.
    monkeypatch.chdir(workdir)
    pl = plan.Plan(plan.load(path))
    rules_seen = set()
    for rule, wildcards, resources in scheduled_resources(out):
        if rule in ("all", "paper_figures"):
            continue  # targets only: they run nothing
        rules_seen.add(rule)
        job = SimpleNamespace(**wildcards)
        planned = pl.resources(rule)
        assert {"mem_mb", "runtime"} <= set(resources), (rule, resources)
        for name in ("mem_mb", "runtime"):
            first, second = planned[name](job, 1), planned[name](job, 2)
            assert int(resources[name]) == first, (rule, wildcards, name)
            assert second > first, (rule, name)
        if rule.startswith("predict") or rule == "finetune_model":
            # the workflow profile (profiles/default) is applied without being named
            assert resources.get("gpu") == "1", (rule, resources)
        else:
            assert "gpu" not in resources, (rule, resources)
    assert len(rules_seen) > 20, sorted(rules_seen)
