"""Label spaces by config: checked (against the dataset's tree and every model's head) before any
job, errors naming the key; the zero-shot split; the shipped CUB-200-2011 example."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import yaml

from tests.support.zsl_trees import CUB_CLASSES, make_cub, make_split
from vcrbench import plan
from vcrbench.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "config" / "zsl-example.yaml"
CHECKPOINT_MODEL = {
    "source": "checkpoint",
    "library": "torchvision",
    "id": "resnet18",
    "checkpoint": "ckpt.pth",
    "label_space": "dataset",
}


@pytest.fixture
def cub(tmp_path):
    root = make_cub(tmp_path / "CUB_200_2011")
    seen, unseen = make_split(tmp_path / "split", CUB_CLASSES[:2], CUB_CLASSES[2:])
    config = {
        "dataset": {
            "kind": "cub200",
            "path": str(root),
            "label_space": {"name": "cub", "class_names": str(root / "classes.txt")},
            "zero_shot": {"seen": str(seen), "unseen": str(unseen)},
        },
        "corruptions": {"gaussian_noise": {}},
        "models": {"net": {**CHECKPOINT_MODEL, "checkpoint": str(tmp_path / "ckpt.pth")}},
    }
    (tmp_path / "ckpt.pth").touch()  # a weights file must exist (checked before any job)
    return config, root


def _validated(config):
    return plan.validate(copy.deepcopy(config))


def test_own_label_space_plans_the_zero_shot_outputs(cub):
    config, _ = cub
    p = plan.Plan(_validated(config))
    assert p.dataset_label_space == "cub"
    assert p.zero_shot == {"seen": [0, 1], "unseen": [2]}
    assert p.model_entries["net"]["label_space"] == config["dataset"]["label_space"]
    outputs = p.final_outputs()
    assert plan.paths.ZERO_SHOT_CLASSES in outputs and plan.paths.ZERO_SHOT_TRANSITIONS in outputs
    settings = p.zero_shot_tables_settings()
    assert settings["class_names"] == CUB_CLASSES and settings["num_classes"] == 3
    # ImageNet-1k configs are unchanged: no zero-shot properties or tables
    default = plan.Plan(_validated({"corruptions": {"gaussian_noise": {}}, "models": {"m": {"source": "timm", "id": "resnet18"}}}))  # fmt: skip
    assert default.zero_shot is None and plan.paths.ZERO_SHOT_CLASSES not in default.final_outputs()


def _set(config, dotted, value):
    out = copy.deepcopy(config)
    node = out
    *head, last = dotted.split(".")
    for key in head:
        node = node[key]
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value
    return out


_DELETE = object()


@pytest.mark.parametrize(
    "key, value, match",
    [
        ("dataset.label_space", "cub200", r"'dataset.label_space': unknown label space 'cub200'"),
        ("dataset.label_space", "imagenet1k", r"'dataset.label_space': dataset.kind 'cub200' has its own classes"),
        ("dataset.label_space", {"name": "cub", "num_classes": 200}, r"'dataset.label_space': .*200 classes but the cub200 tree .* has 3"),
        ("dataset.label_space", {"name": "cub", "class_names": list(reversed(CUB_CLASSES))}, r"'dataset.label_space': class 0 is '003.Sooty_Albatross' in the label space but '001"),
        ("dataset.label_space", {"name": "geirhos16", "num_classes": 3}, r"'dataset.label_space': .*reserved"),
        ("dataset.label_space", {"num_classes": 3}, r"dataset.label_space"),
        ("dataset.label_space", {"name": "cub", "class_names": "nope.txt"}, r"'dataset.label_space': .*nope.txt not found"),
        ("dataset.zero_shot", {"seen": ["001.Black_footed_Albatross"], "unseen": ["xx"]}, r"'dataset.zero_shot': unseen\[0\]: unseen class 'xx'"),
        ("dataset.split", "bogus", r"dataset.split"),
        ("dataset.path", "no/such/dir", r"'dataset.path': folder no/such/dir does not exist"),
        ("models.net.label_space", _DELETE, r"'models.net.label_space': model 'net' predicts label space 'imagenet1k' \(1000 classes\) but the data is labelled in 'cub' \(3 classes\)"),
        ("models.net.label_space", {"name": "cub", "num_classes": 4}, r"'models.net.label_space': .*'cub' \(4 classes\)"),
        ("models.net.kwargs", {"num_classes": 200}, r"'models.net.kwargs.num_classes': model 'net' declares a head of 200 classes but label space 'cub' has 3"),
    ],
)  # fmt: skip
def test_bad_label_space_configs_name_the_key(cub, key, value, match):
    config, _ = cub
    with pytest.raises(ConfigError, match=match):
        _validated(_set(config, key, value))


def test_zero_shot_needs_class_names_and_split_needs_cub(cub, tmp_path):
    config, _ = cub
    bad = _set(config, "dataset.label_space", {"name": "cub", "num_classes": 3})
    bad["models"]["net"]["label_space"] = {"name": "cub", "num_classes": 3}
    with pytest.raises(ConfigError, match=r"'dataset.zero_shot': needs class names"):
        _validated(bad)
    folder = {"kind": "embedded", "split": "test"}
    with pytest.raises(ConfigError, match=r"'dataset.split': 'test' needs dataset.kind 'cub200'"):
        _validated({"dataset": folder, "corruptions": {"gaussian_noise": {}}, "models": {"m": {"source": "timm", "id": "resnet18"}}})  # fmt: skip


def test_shipped_example_validates_on_a_tree_in_its_layout(tmp_path, monkeypatch):
    """config/zsl-example.yaml with its relative paths, on a tiny CUB tree and split built here."""
    make_cub(tmp_path / "data" / "CUB_200_2011")
    make_split(tmp_path / "data" / "xlsa17" / "data" / "CUB", CUB_CLASSES[:2], CUB_CLASSES[2:])
    monkeypatch.chdir(tmp_path)
    config = plan.load(EXAMPLE)
    p = plan.Plan(config)
    assert p.dataset_label_space == "cub200" and p.zero_shot == {"seen": [0, 1], "unseen": [2]}
    assert config["models"]["clip_vit_b32"]["label_space"] == "dataset"
    assert p.model_entries["clip_vit_b32"]["label_space"]["name"] == "cub200"
    text = EXAMPLE.read_text()
    assert "spatial_smoothing" in text and "tv_minimization" in text
    os.remove(tmp_path / "data" / "CUB_200_2011" / "classes.txt")
    with pytest.raises(ConfigError, match="dataset.label_space"):
        plan.load(EXAMPLE)
    assert yaml.safe_load(text)["dataset"]["kind"] == "cub200"
