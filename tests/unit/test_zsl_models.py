"""Zero-shot models on a dataset's own classes: CLIP over the dataset's class names (a tiny
open_clip model the tests write, loaded by the real open_clip code) and a local checkpoint whose
head must match the dataset's label space."""

from __future__ import annotations

import copy

import pytest
import torch

from tests.support.zsl_trees import CUB_CLASSES, make_cub
from tests.unit import test_models
from tests.unit.test_models import _prompt_embedding, _save, same_weights
from vcrbench import plan
from vcrbench.errors import ModelLoadError
from vcrbench.models import ModelSpec, load_model
from vcrbench.models.clip_models import readable_class_name

tiny_clip = test_models.tiny_clip  # the tiny open_clip model test_models writes (a fixture)


def test_readable_class_names():
    assert readable_class_name("001.Black_footed_Albatross") == "Black footed Albatross"
    assert readable_class_name("apartment_building_outdoor") == "apartment building outdoor"
    assert readable_class_name("grizzly+bear") == "grizzly+bear"


def _config(root, models):
    return plan.validate(
        {
            "dataset": {
                "kind": "cub200",
                "path": str(root),
                "label_space": {"name": "cub", "class_names": str(root / "classes.txt")},
            },
            "corruptions": {"gaussian_noise": {}},
            "models": copy.deepcopy(models),
        }
    )


def test_clip_zero_shot_head_over_the_dataset_classes(tiny_clip, tmp_path):
    folder, ref = tiny_clip
    root = make_cub(tmp_path / "cub", per_class=1)
    entry = {
        "source": "clip",
        "id": f"local-dir:{folder}",
        "prompt": "a photo of a {}, a type of bird.",
        "label_space": "dataset",
    }
    p = plan.Plan(_config(root, {"clip": entry}))
    m = load_model(ModelSpec.from_config("clip", p.model_entries["clip"]))
    assert m.num_classes == 3 and m.label_space.name == "cub"
    assert m.label_space.class_names == tuple(CUB_CLASSES)
    for c, name in enumerate(["Black footed Albatross", "Laysan Albatross", "Sooty Albatross"]):
        torch.testing.assert_close(
            m.net.class_embeddings[:, c],
            _prompt_embedding(ref, f"a photo of a {name}, a type of bird."),
        )


def test_checkpoint_head_must_match_the_dataset(tmp_path):
    import torchvision

    root = make_cub(tmp_path / "cub", per_class=1)
    net = torchvision.models.resnet18(weights=None, num_classes=3).eval()
    good = _save(net.state_dict(), tmp_path / "cub3.pth")
    entry = {
        "source": "checkpoint",
        "library": "python",
        "id": "torchvision.models:resnet18",
        "kwargs": {"num_classes": 3},
        "checkpoint": good,
        "input_size": 32,
        "label_space": "dataset",
    }
    p = plan.Plan(_config(root, {"cub_net": entry}))
    m = load_model(ModelSpec.from_config("cub_net", p.model_entries["cub_net"]))
    assert same_weights(m.net, net) and m.label_space.name == "cub"
    # a head the config cannot see (no num_classes declared): caught at load, naming both
    wide = torchvision.models.resnet18(weights=None).eval()  # ImageNet's 1000 classes
    bad = {**entry, "kwargs": {}, "checkpoint": _save(wide.state_dict(), tmp_path / "w.pth")}
    p = plan.Plan(_config(root, {"cub_net": bad}))
    with pytest.raises(
        ModelLoadError,
        match=r"model 'cub_net' outputs 1000 classes but its label space 'cub' has 3",
    ):
        load_model(ModelSpec.from_config("cub_net", p.model_entries["cub_net"]))
    # a checkpoint that does not fit the declared head: the mismatch named at load
    narrow = {**entry, "checkpoint": _save(wide.state_dict(), tmp_path / "w2.pth")}
    with pytest.raises(
        ModelLoadError, match=r"model 'cub_net'.*fc.weight: file \(1000, 512\) vs model \(3, 512\)"
    ):
        load_model(
            ModelSpec.from_config(
                "cub_net", plan.Plan(_config(root, {"cub_net": narrow})).model_entries["cub_net"]
            )
        )
