"""A dataset with its own label space through the whole workflow: a tiny CUB-200-2011 tree and a
zero-shot split built here, a checkpoint written here; per-class, seen/unseen and H curves and R̂.
Bad label-space configs stop before any job, naming the key; the shipped example dry-runs."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest
import yaml

from tests.support.zsl_trees import CUB_CLASSES, make_cub, make_split
from vcrbench.files import io
from vcrbench.vocab import ZERO_SHOT_PROPERTIES

from .conftest import REPO, config_error, snakemake
from .test_workflow import dry_run, scheduled_jobs


def _tree(workdir):
    root = make_cub(workdir / "data" / "CUB_200_2011", per_class=4)
    make_split(workdir / "data" / "xlsa17" / "data" / "CUB", CUB_CLASSES[:2], CUB_CLASSES[2:])
    return root


def _config(workdir, **changes):
    root = _tree(workdir)
    config = {
        "seed": 3,
        "dataset": {
            "kind": "cub200",
            "path": "data/CUB_200_2011",
            "label_space": {"name": "cub", "class_names": "data/CUB_200_2011/classes.txt"},
            "zero_shot": {
                "seen": "data/xlsa17/data/CUB/trainvalclasses.txt",
                "unseen": "data/xlsa17/data/CUB/testclasses.txt",
            },
        },
        "corruptions": {"gaussian_noise": {}},
        "sampling": {"mode": "parameter-uniform", "n_samples": 48, "shard_size": 24},
        "imagenet_c": {"enabled": False},
        "models": {
            "cub_net": {
                "source": "checkpoint",
                "library": "python",
                "id": "torchvision.models:resnet18",
                "kwargs": {"num_classes": 3},
                "checkpoint": "cub_net.pth",
                "input_size": 32,
                "label_space": "dataset",
            }
        },
        "inference": {"batch_size": 16, "num_workers": 0, "shards_per_job": 2, "device": "cpu"},
        "estimation": {"n_boot": 20, "min_count": 1, "label_spaces": ["dataset"]},
        "humans": {"references": {}, "conditions_table": False},
        "figures": {"label_space": "dataset", "curves_label_space": "dataset", "formats": ["png"]},
    }
    config.update(changes)
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path, root


def _checkpoint(workdir):
    import torch
    import torchvision

    torch.manual_seed(0)
    net = torchvision.models.resnet18(weights=None, num_classes=3).eval()
    torch.save(net.state_dict(), workdir / "cub_net.pth")


def test_bad_label_space_stops_before_any_job(tmp_path, monkeypatch):
    """The workflow's checks in process (``config_error``), in the run's folder."""
    configfile, _ = _config(tmp_path)
    monkeypatch.chdir(tmp_path)  # the config's relative paths
    (tmp_path / "cub_net.pth").touch()  # weights must exist (checked before any job)
    config = yaml.safe_load(configfile.read_text())
    config["dataset"]["label_space"] = "cub200"
    configfile.write_text(yaml.safe_dump(config))
    said = config_error(configfile)
    assert "config key 'dataset.label_space': unknown label space 'cub200'" in said, said
    config["dataset"]["label_space"] = {"name": "cub", "num_classes": 3}
    del config["dataset"]["zero_shot"]
    del config["models"]["cub_net"]["label_space"]  # an ImageNet-1k head on CUB's classes
    configfile.write_text(yaml.safe_dump(config))
    assert "config key 'models.cub_net.label_space'" in config_error(configfile)


def test_shipped_example_dry_runs_on_a_tree_in_its_layout(tmp_path):
    _tree(tmp_path)
    shutil.copy(REPO / "config" / "zsl-example.yaml", tmp_path / "zsl.yaml")
    out = dry_run(tmp_path, configfile=tmp_path / "zsl.yaml")
    jobs = scheduled_jobs(out)
    rules = {rule for rule, _ in jobs}
    assert {"prepare_clean_set", "predict_clean", "estimate_curves", "zero_shot_tables"} <= rules
    # its two defended models run as models of their own, compared with the undefended one
    defended = {w["model"] for r, w in jobs if r == "predict_clean"} - {"clip_vit_b32"}
    assert defended == {"clip_vit_b32_smoothing", "clip_vit_b32_tvm"}
    assert {"defense_table", "plot_defenses"} <= rules


@pytest.fixture(scope="module")
def zsl_run(tmp_path_factory):
    """The tree's whole workflow, run once for this file's end-to-end tests: (folder, config).
    Log-probabilities are saved (`inference.save_logprobs`), which adds the unseen-only tables
    and changes nothing else that is checked here (a run without them: the shared tiny run)."""
    workdir = tmp_path_factory.mktemp("zsl-run")
    inference = {"batch_size": 16, "num_workers": 0, "shards_per_job": 2, "device": "cpu"}
    configfile, _ = _config(workdir, inference={**inference, "save_logprobs": True})
    _checkpoint(workdir)
    proc = snakemake(workdir, "--cores", "2", "--show-failed-logs", configfile=configfile)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
    return workdir, configfile


@pytest.mark.slow
def test_own_label_space_runs_end_to_end(zsl_run):
    tmp_path, configfile = zsl_run
    results = tmp_path / "results"
    clean = io.read_parquet(results / "predictions" / "cub_net" / "clean.parquet")
    assert len(clean) == 12 and set(clean["label"]) == {0, 1, 2}
    assert clean["pred"].between(0, 2).all() and (clean["pred16"] == -1).all()
    curves = io.read_parquet(
        results / "estimates" / "cub_net" / "gaussian_noise" / "curves.parquet"
    )
    props = set(curves["property"])
    assert {"accuracy", "consistency", *ZERO_SHOT_PROPERTIES.values()} <= props
    assert set(curves["label_space"]) == {"cub"}
    metrics = pd.read_csv(results / "tables" / "vcr_metrics.csv")
    row = metrics.iloc[0]
    assert row["label_space"] == "cub"
    for key in ("a", "p", *ZERO_SHOT_PROPERTIES):
        assert 0 <= row[f"R_{key}"] <= 1 and row[f"R_{key}_lo"] <= row[f"R_{key}_hi"], key
    h = 2 * row["R_s"] * row["R_u"] / (row["R_s"] + row["R_u"]) if row["R_s"] + row["R_u"] else 0
    assert row["R_H"] <= max(row["R_s"], row["R_u"]) + 1e-9 and (row["R_H"] > 0) == (h > 0)
    classes = pd.read_csv(results / "tables" / "zero_shot_classes.csv")
    assert classes.groupby("class")["n"].sum().sum() == 48
    assert set(classes["group"]) == {"seen", "unseen"}
    assert set(classes["class_name"]) <= set(CUB_CLASSES)
    trans = pd.read_csv(results / "tables" / "zero_shot_transitions.csv")
    overall = trans[(trans["group"] == "all") & (trans["bin"] == -1)].iloc[0]
    assert overall["n"] == 48 and overall["n_clean_correct"] + overall["n_clean_false"] == 48
    assert set(trans["group"]) == {"all", "seen", "unseen"}
    # nothing left to do on a rerun
    again = snakemake(tmp_path, "-n", "--cores", "1", configfile=configfile)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_unseen_only_is_planned_only_with_saved_logprobs(tmp_path):
    configfile, _ = _config(tmp_path)
    (tmp_path / "cub_net.pth").write_bytes(b"")  # a dry run needs the file, not its contents
    rules = {rule for rule, _ in scheduled_jobs(dry_run(tmp_path, configfile=configfile))}
    assert "clean_correct" in rules and "zero_shot_unseen_only" not in rules
    inference = {"batch_size": 16, "num_workers": 0, "shards_per_job": 2, "device": "cpu"}
    configfile, _ = _config(tmp_path, inference={**inference, "save_logprobs": True})
    rules = {rule for rule, _ in scheduled_jobs(dry_run(tmp_path, configfile=configfile))}
    assert {"clean_correct", "zero_shot_unseen_only"} <= rules


@pytest.mark.slow
def test_unseen_only_and_clean_correct_tables_end_to_end(zsl_run):
    tmp_path, _ = zsl_run
    tables = tmp_path / "results" / "tables"
    unseen = pd.read_csv(tables / "zero_shot_unseen_only.csv")
    # the split has one unseen class: restricted to it, every decision on its images is right
    row = unseen.iloc[0]
    assert row["property"] == "unseen_only_accuracy" and row["n_images"] == 4
    assert row["clean_accuracy"] == 1.0 and row["R"] == pytest.approx(1.0)
    assert len(pd.read_csv(tables / "zero_shot_unseen_only_curves.csv")) > 0
    correct = pd.read_csv(tables / "clean_correct.csv")
    clean = io.read_parquet(tmp_path / "results" / "predictions" / "cub_net" / "clean.parquet")
    n_ok = int((clean["pred"] == clean["label"]).sum())
    acc = correct[correct["property"] == "accuracy"]
    assert acc["n_images"].tolist() == ([n_ok] if n_ok else [])
    assert (acc["clean_accuracy"] == 1.0).all()
