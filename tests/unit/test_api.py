"""The Python API (vcrbench.benchmark, docs/api.md): its config, cache, model checks, device,
reuse of generated test sets, the `vcrbench` command and the README's example. Its metrics equal
the workflow's: tests/workflow/test_api_workflow.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from vcrbench import schema, vocab
from vcrbench.api import cache, cli, experiment
from vcrbench.api import models as api_models
from vcrbench.errors import ConfigError, ConfigErrors, ModelLoadError
from vcrbench.plan import Plan

REPO = Path(__file__).resolve().parents[2]


class Tiny(nn.Module):
    """A fixed linear classifier of 4x4 average colours: fast, deterministic, ``classes`` out."""

    def __init__(self, classes: int = 1000) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.pool = nn.AdaptiveAvgPool2d(4)
        self.fc = nn.Linear(48, classes)

    def forward(self, x):
        return self.fc(self.pool(x).flatten(1))


def _plan(**changes) -> Plan:
    base, _ = experiment.read_base(None, None)
    return Plan(experiment.build(base, "tiny", None, keep_models=False, **changes))


# --------------------------------------------------------------------------- the config


def test_the_default_experiment_is_the_checkouts_config_and_the_models_entry_is_added():
    base, where = experiment.read_base(None, None)
    assert Path(where) == REPO / "config" / "config.yaml"
    entry = experiment.model_entry("timm:resnet50.a1_in1k", base["models"])
    assert entry == {"source": "timm", "id": "resnet50.a1_in1k"}
    config = experiment.build(base, "resnet50.a1_in1k", entry, keep_models=False)
    assert list(config["models"]) == ["resnet50.a1_in1k"]  # the config's own are not evaluated
    assert config["sampling"]["n_samples"] == base["sampling"]["n_samples"]


def test_keywords_are_config_keys_and_the_schema_gives_every_other_default():
    config = experiment.build(
        {"models": {"m": {"source": "timm", "id": "resnet18"}}}, "m", None, keep_models=True,
        corruptions=["contrast"], n_samples=48, device="cpu",
        settings={"estimation.n_boot": 7, "seed": 3},
    )  # fmt: skip
    assert config["corruptions"] == {"contrast": {}}
    assert config["sampling"]["n_samples"] == 48
    assert config["inference"]["device"] == "cpu"
    assert config["estimation"]["n_boot"] == 7 and config["seed"] == 3
    defaults = schema.validate(
        {"models": {"m": {"source": "timm", "id": "resnet18"}}, "corruptions": {"contrast": {}}}
    )
    assert config["sampling"]["shard_size"] == defaults["sampling"]["shard_size"]
    assert config["estimation"]["min_count"] == defaults["estimation"]["min_count"]


def test_a_wrong_setting_or_corruption_is_named_by_its_key():
    base, _ = experiment.read_base(None, None)
    with pytest.raises(ConfigErrors, match=r"estimation\.n_bot"):
        experiment.build(base, "m", None, keep_models=False, settings={"estimation.n_bot": 7})
    with pytest.raises(ConfigErrors, match="gausian_noise"):
        experiment.build(base, "m", None, keep_models=False, corruptions=["gausian_noise"])


def test_a_folder_dataset_takes_its_labels_csv(tmp_path):
    base, _ = experiment.read_base(None, None)
    with pytest.raises(ConfigErrors, match=r"dataset\.labels"):
        experiment.build(base, "m", None, keep_models=False, dataset=tmp_path)
    (tmp_path / "labels.csv").write_text("file,label\n")
    config = experiment.build(base, "m", None, keep_models=False, dataset=tmp_path)
    assert config["dataset"]["kind"] == "folder"
    assert config["dataset"]["labels"] == str(tmp_path / "labels.csv")
    assert config["dataset"]["resize"] == base["dataset"]["resize"]  # the rest of the block kept


def test_model_names_and_ids():
    assert experiment.model_name("timm:resnet50.a1_in1k", None) == "resnet50.a1_in1k"
    assert experiment.model_name(Tiny(), None) == "Tiny"
    assert experiment.model_name({"source": "hub", "id": "a/b:c"}, None) == "a_b_c"
    with pytest.raises(ConfigError, match="names a folder"):
        experiment.model_name(Tiny(), "my/model")
    with pytest.raises(ConfigError, match="'source:id'.*efficientnet_lite0"):
        experiment.model_entry("resnet50", {"efficientnet_lite0": {}})
    assert experiment.model_entry("efficientnet_lite0", {"efficientnet_lite0": {"id": "x"}}) == {
        "id": "x"
    }


def test_a_run_folder_must_be_a_runs_results(tmp_path):
    with pytest.raises(ConfigError, match="no such folder"):
        experiment.run_folders(tmp_path / "nothing")
    (tmp_path / "results").mkdir()
    with pytest.raises(ConfigError, match="holds no testsets"):
        experiment.run_folders(tmp_path)
    with pytest.raises(ConfigError, match=r"config/config\.yaml.*pass config="):
        (tmp_path / "results" / "testsets").mkdir()
        experiment.read_base(None, tmp_path / "results")


# --------------------------------------------------------------------------- the cache


def test_the_cache_honours_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_folder() == tmp_path / "xdg" / "vcrbench"
    assert (tmp_path / "xdg" / "vcrbench").is_dir()
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.default_cache() == tmp_path / "home" / ".cache" / "vcrbench"


def test_a_read_only_home_is_a_clear_error(tmp_path, monkeypatch):
    from tests.support.homes import read_only_home

    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    with read_only_home(tmp_path / "home") as enforced:
        if not enforced and os.geteuid() == 0:
            pytest.skip("root without a read-only mount: nothing stops a write")
        with pytest.raises(ConfigError, match=r"cannot be written.*XDG_CACHE_HOME") as info:
            cache.cache_folder()
    assert str(tmp_path / "home" / ".cache" / "vcrbench") in str(info.value)


# --------------------------------------------------------------------------- the model


def test_a_module_with_another_number_of_classes_is_named_before_any_work(tmp_path):
    import vcrbench

    with pytest.raises(ModelLoadError, match=r"outputs 10 classes but .* has 1000"):
        vcrbench.benchmark(Tiny(10), cache_dir=tmp_path, device="cpu", progress=False)
    assert not (tmp_path / "testsets").exists()  # nothing generated
    with pytest.raises(
        ModelLoadError, match=r"'tiny' outputs 10 classes but .*'imagenet1k' has 1000"
    ):
        api_models.classifier_of(Tiny(10), None, "tiny", _plan(device="cpu"), None)


def test_a_module_whose_output_is_not_logits_is_named():
    class Wrong(Tiny):
        def forward(self, x):
            return super().forward(x).unsqueeze(1)

    with pytest.raises(ModelLoadError, match=r"logits of shape \(1, 1, 1000\).*\(1, 1000\)"):
        api_models.classifier_of(Wrong(), None, "wrong", _plan(device="cpu"), None)


def test_preprocessing_of_a_module_and_of_an_id():
    built, spec, device = api_models.classifier_of(
        Tiny(), None, "tiny", _plan(device="cpu"), {"input_size": 64, "mean": (0.5,) * 3,
                                                    "std": (0.5,) * 3}
    )  # fmt: skip
    assert built.preprocessing.input_size == 64 and built.preprocessing.mean == (0.5,) * 3
    assert (spec.source, device) == ("module", "cpu")
    with pytest.raises(ValueError, match="preprocessing.*interpolation"):
        api_models.classifier_of(
            Tiny(), None, "tiny", _plan(device="cpu"), {"interpolation": "lanczos"}
        )
    with pytest.raises(ValueError, match="preprocessing= is for a module"):
        api_models.classifier_of("timm:x", {"source": "timm", "id": "x"}, "x", _plan(), {})
    with pytest.raises(TypeError, match="torch.nn.Module.*not int"):
        api_models.classifier_of(3, None, "three", _plan(device="cpu"), None)


def test_a_timm_module_brings_its_own_preprocessing():
    import timm

    net = timm.create_model("tf_efficientnet_lite0", pretrained=False)  # no download
    built, _, _ = api_models.classifier_of(net, None, "lite0", _plan(device="cpu"), None)
    assert built.preprocessing.mean == (0.5, 0.5, 0.5) and built.preprocessing.std == (0.5,) * 3
    assert built.preprocessing.interpolation == net.pretrained_cfg["interpolation"]


@pytest.mark.parametrize(
    ("setting", "gpu", "expected"), [("auto", True, "cuda"), ("auto", False, "cpu"),
                                     ("cpu", True, "cpu")]
)  # fmt: skip
def test_the_gpu_when_there_is_one(monkeypatch, setting, gpu, expected):
    """``inference.device: auto`` (the schema's default) puts the model on the GPU where torch
    sees one; ``device="cpu"`` keeps it on the CPU (checked here without a GPU: the device the
    model is built on is recorded instead of moving it there)."""
    from vcrbench.models import loading

    seen = {}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: gpu)
    monkeypatch.setattr(loading, "wrap", lambda *a, **k: seen.setdefault("device", a[5]))
    _, _, device = api_models.classifier_of(Tiny(), None, "tiny", _plan(device=setting), None)
    assert seen["device"].type == expected and device == expected


# --------------------------------------------------------------------------- one call, twice

SMALL = {
    "sampling.mode": "parameter-uniform",
    "sampling.shard_size": 8,
    "estimation.n_boot": 10,
    "estimation.min_count": 1,
}


def test_a_module_end_to_end_and_the_test_sets_reused(tmp_path, monkeypatch):
    """A module through every stage on the embedded images (brightness has no human reference:
    no human stage), then again: the second call reads the cached test sets, generates nothing,
    and gives the same metrics."""
    import vcrbench
    from vcrbench.testsets import sampling, testset

    args = dict(corruptions=["brightness"], n_samples=16, device="cpu", settings=SMALL,
                cache_dir=tmp_path / "cache", progress=False)  # fmt: skip
    first = vcrbench.benchmark(Tiny(), name="tiny", **args)
    assert list(first.metrics.columns) == vocab.METRIC_COLUMNS
    assert set(first.metrics["label_space"]) == {"imagenet1k", "geirhos16"}
    assert (first.metrics["model"] == "tiny").all() and first.device == "cpu"
    assert {"corruption", "label_space", "property", "v", "s", "lo", "hi"} <= set(first.curves)
    shards = sorted((tmp_path / "cache" / "testsets").rglob("shard-*.parquet"))
    assert len(shards) == 2  # 16 samples in shards of 8
    written = first.plot(tmp_path / "figures", formats=["png"])
    assert sorted(p.relative_to(tmp_path / "figures").as_posix() for p in written) == [
        "figures/curves/brightness.png",
        "figures/hmri_mrsi/brightness.png",
    ]

    def no(*args, **kwargs):
        raise AssertionError("a cached test set was generated again")

    monkeypatch.setattr(testset, "generate_shard", no)
    monkeypatch.setattr(sampling, "make_manifest", no)
    second = vcrbench.benchmark(Tiny(), name="tiny", **args)
    pd.testing.assert_frame_equal(first.metrics, second.metrics)
    # another setting of the test sets is another test set: generated (here: refused)
    with pytest.raises(AssertionError, match="generated again"):
        vcrbench.benchmark(Tiny(), name="tiny", **{**args, "n_samples": 24})


# --------------------------------------------------------------------------- the command


def test_the_console_script_is_declared_and_runs():
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"vcrbench": "vcrbench.api.cli:main"}
    # make setup installs the package (editable), again when pyproject.toml changes: the script
    # is on the venv's PATH after it
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^\$\(VENV\)/\.installed: .*pyproject\.toml", makefile, re.M)
    assert "pip install --quiet --no-deps -e ." in makefile
    proc = subprocess.run(
        [sys.executable, "-m", "vcrbench", "evaluate", "--help"], capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0 and "--model" in proc.stdout and "--run" in proc.stdout


def test_the_command_names_a_bad_model(capsys):
    assert cli.main(["evaluate", "--model", "resnet50", "--quiet"]) == 2
    assert "give a model as 'source:id'" in capsys.readouterr().err
    assert cli._setting("estimation.n_boot=50") == ("estimation.n_boot", 50)


def test_importing_vcrbench_imports_no_api_until_asked():
    proc = subprocess.run(
        [sys.executable, "-c", "import sys, vcrbench\n"
         "print('API', 'vcrbench.api' in sys.modules, 'torch' in sys.modules)\n"
         "vcrbench.benchmark\nprint('AFTER', 'vcrbench.api' in sys.modules)\n"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "API False False" in proc.stdout and "AFTER True" in proc.stdout


# --------------------------------------------------------------------------- the README


def readme_example() -> str:
    """The README's Python example: the ```python block of its section "From Python"."""
    text = (REPO / "README.md").read_text()
    section = text.split("## From Python", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_example_is_short():
    assert 0 < len(readme_example().strip().splitlines()) <= 10


@pytest.mark.slow
def test_the_readme_example_runs_as_typed(tmp_path):
    """The example, as typed, on the embedded images (a few minutes on 2 cores): it prints a
    metrics table and draws the figures, into a fresh cache."""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), NO_ALBUMENTATIONS_UPDATE="1")
    proc = subprocess.run(
        [sys.executable, "-c", readme_example()], capture_output=True, text=True, env=env,
        cwd=tmp_path, timeout=1200,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert re.search(r"contrast\s+imagenet1k\s+\d\.\d+", proc.stdout), proc.stdout
    figures = list((tmp_path / "cache" / "vcrbench" / "models").rglob("figures/curves/*.png"))
    assert figures and np.all([f.stat().st_size > 0 for f in figures])
