"""What a finished run reruns (issue 27): a fresh clone with a copied results/ and nothing changed
plans no generation, inference or estimation; a touched or edited script reruns nothing unless its
stage version says so, and then that stage and what reads it; adding a model to a fresh clone's
copied results reruns only that model's jobs and the tables over models. The deliberate signal is
each stage's version (a param); Snakemake's "code" rerun trigger is off (profiles/default) and the
fetched-weights record is an ``ancient`` input of the predictions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from .conftest import REPO, snakemake
from .test_workflow import scheduled_jobs

#: What a user clones: the workflow's files (the library comes from the installed environment).
CLONED = ("Snakefile", "rules", "workflow", "config", "profiles", "report", "envs")
#: Rules whose jobs are the expensive part of a run.
EXPENSIVE = (
    "prepare_clean_set",
    "sample_manifest",
    "generate_shard",
    "generate_imagenet_c",
    "predict_clean",
    "predict_group",
    "predict_imagenet_c",
    "predict_model",
    "estimate_curves",
)


def fresh_clone(dest: Path) -> Path:
    """The workflow's files copied with new mtimes, as `git clone` makes them."""
    for name in CLONED:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, copy_function=shutil.copy)
        else:
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dest / name)
    return dest / "Snakefile"


def copied_results(finished_run: Path, dest: Path) -> Path:
    """``finished_run``'s results/ and config copied as `cp -a` copies them (mtimes kept), without
    Snakemake's metadata (.snakemake/ is not copied)."""
    shutil.copytree(finished_run / "results", dest / "results", symlinks=True)
    shutil.copy2(finished_run / "config.yaml", dest / "config.yaml")
    return dest


def planned(workdir: Path, snakefile: Path, configfile: Path) -> list[tuple[str, dict]]:
    """The jobs a dry run of the workflow's target `all` plans."""
    proc = snakemake(
        workdir, "-n", "--cores", "2", "all", configfile=configfile, snakefile=snakefile
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    return scheduled_jobs(out)


@pytest.mark.slow
def test_a_fresh_clone_with_copied_results_reruns_nothing(finished_run, tmp_path):
    snakefile = fresh_clone(tmp_path / "clone")
    work = copied_results(finished_run, tmp_path / "work")
    jobs = planned(work, snakefile, work / "config.yaml")
    assert jobs == [], sorted({r for r, _ in jobs})


@pytest.mark.slow
def test_adding_a_model_to_a_fresh_clone_reruns_only_that_model(finished_run, tmp_path):
    snakefile = fresh_clone(tmp_path / "clone")
    work = copied_results(finished_run, tmp_path / "work")
    config = yaml.safe_load((work / "config.yaml").read_text())
    config["models"]["efficientnet_lite1"] = {
        "source": "efficientnet-lite-pypi",
        "id": "tf_efficientnet_lite1",
        "family": "supervised",
    }
    (work / "two-models.yaml").write_text(yaml.safe_dump(config))
    jobs = planned(work, snakefile, work / "two-models.yaml")
    rules = {r for r, _ in jobs}
    assert not rules & {"prepare_clean_set", "sample_manifest", "generate_shard"}, rules
    assert not rules & {"generate_imagenet_c", "ingest_human_reference"}, rules
    for rule, wildcards in jobs:
        if rule in EXPENSIVE or rule == "fetch_weights":
            assert wildcards.get("model") == "efficientnet_lite1", (rule, wildcards)
    assert {"predict_model", "estimate_curves", "collect_metrics"} <= rules


@pytest.mark.slow
def test_an_edited_script_reruns_only_what_its_stage_version_says(copy_run, tmp_path):
    """In place (Snakemake's metadata kept): touching or editing scripts plans nothing; a new
    version of a stage (here estimation) reruns that stage's jobs and what reads their outputs,
    no generation or inference; a rerun of the weights fetch reruns no prediction."""
    snakefile = fresh_clone(tmp_path / "clone")
    config = copy_run / "config.yaml"
    scripts = tmp_path / "clone" / "workflow" / "scripts"
    for name in ("fetch_weights.py", "predict_shards.py", "estimate_curves.py"):
        with (scripts / name).open("a") as f:
            f.write("\n# an edit that changes no output\n")
    assert planned(copy_run, snakefile, config) == []

    bumped = snakefile.with_name("Snakefile.bumped")
    bumped.write_text(  # (an included Snakefile's default target is not the run's: `all` above)
        "from vcrbench.plan import versions\n"
        'versions.VERSIONS["estimate_curves"] += 1\n\n\n'
        'include: "Snakefile"\n'
    )
    jobs = planned(copy_run, bumped, config)
    rules = {r for r, _ in jobs}
    assert "estimate_curves" in rules and "collect_metrics" in rules, rules
    assert not rules & (set(EXPENSIVE) - {"estimate_curves"}), rules

    proc = snakemake(
        copy_run, "-n", "--cores", "2", "--forcerun", "fetch_weights", configfile=config,
        snakefile=snakefile,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert {r for r, _ in scheduled_jobs(proc.stdout + proc.stderr)} == {"fetch_weights"}
