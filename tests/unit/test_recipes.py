"""The recipes of docs/architecture.md, followed from a test module: "Add a corruption", "Add a
model source" and "Add a dataset kind" each register everything about the new name in one place,
and the rest of the project (config validation, generation, inference, the checks before a run,
fine-tuning, the throughput plan, the by-category tables, reading a dataset and sizing its clean
set) finds it there. The registries are left as they were.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from torch import nn

from tests.support.shipped import REPO
from vcrbench import plan
from vcrbench.corruptions import (
    Param,
    get_corruption,
    list_corruptions,
    register_corruption,
    unregister_corruption,
)
from vcrbench.datasets import loading
from vcrbench.datasets.kinds import (
    DATASET_KINDS,
    DatasetRequest,
    register_dataset_kind,
    unregister_dataset_kind,
)
from vcrbench.datasets.layouts import dataset_frame
from vcrbench.errors import ConfigError, CorruptionError, DatasetError, ModelConfigError
from vcrbench.files import io
from vcrbench.inference.run import InferenceOptions, predict_shards
from vcrbench.models import (
    SOURCES,
    Built,
    ModelSpec,
    load_model,
    register_source,
    unregister_source,
)
from vcrbench.models.checks import check_models
from vcrbench.models.sources import same_source
from vcrbench.models.spec import CHECKPOINT_KEYS
from vcrbench.plan import work
from vcrbench.plan.config import clean_set_size
from vcrbench.plan.retrain import derived_entry
from vcrbench.settings import DatasetSettings
from vcrbench.tables import corruption_error
from vcrbench.testsets import sampling, testset

CORRUPTION = "recipe_fade"
SOURCE = "recipe-linear"
KIND = "recipe-image-list"

# --------------------------------------------------------------------------- Add a corruption


def fade(image: np.ndarray, params, rng: np.random.Generator) -> np.ndarray:
    """Blend towards mid-grey, with a little noise: ``amount`` 0 leaves the image as it is."""
    amount = params["amount"]
    noise = rng.normal(0.0, 2.0 * amount, image.shape)
    return (1.0 - amount) * image + amount * 128.0 + noise


@pytest.fixture
def toy_corruption():
    register_corruption(
        CORRUPTION,
        params=[Param("amount", identity=0.0, limits=(0.0, 1.0), doc="share of grey")],
        domain={"amount": [0.0, 0.95]},
        category="digital",
        function=fade,
    )
    yield get_corruption(CORRUPTION)
    unregister_corruption(CORRUPTION)
    assert CORRUPTION not in list_corruptions()


def tiny_config(**changes) -> dict:
    config = yaml.safe_load((REPO / "tests" / "workflow" / "tiny.yaml").read_text())
    config.update(copy.deepcopy(changes))
    return config


def test_a_registered_corruption_has_its_category_and_generates(
    toy_corruption, clean_set, tmp_path
):
    c = toy_corruption
    assert (c.name, c.source, c.category) == (CORRUPTION, "user", "digital")
    assert c.domain == {"amount": (0.0, 0.95)} and c.identity == {"amount": 0.0}
    # the by-category tables read the category where it is registered
    assert corruption_error.category(CORRUPTION) == "digital"
    image = clean_set.images(clean_set.image_ids[:1])[0]
    assert np.array_equal(c.apply(image, c.identity, seed=3), image)
    manifest = sampling.make_manifest(c, clean_set, 6, 6, seed=0, mode="parameter-uniform")
    assert manifest["param.amount"].between(0.0, 0.95).all()
    shard = testset.generate_shard(manifest, 0, clean_set, c, tmp_path / "shard-00000.parquet")
    table = io.read_table(shard)
    assert table.num_rows == 6 and table.column("corruption").to_pylist() == [CORRUPTION] * 6
    dv = np.asarray(table.column("dv").to_pylist())
    assert ((dv >= 0) & (dv <= 1)).all() and dv.max() > 0


def test_a_registered_corruption_validates_in_a_config(toy_corruption):
    config = plan.validate(tiny_config(corruptions={CORRUPTION: {}, "brightness": {}}))
    assert list(config["corruptions"]) == [CORRUPTION, "brightness"]
    narrowed = tiny_config(corruptions={CORRUPTION: {"domain": {"amount": [0.1, 0.5]}}})
    options = plan.validate(narrowed)["corruptions"][CORRUPTION]
    assert get_corruption(CORRUPTION, options).domain == {"amount": (0.1, 0.5)}
    with pytest.raises(ConfigError, match=f"corruptions.{CORRUPTION}.*valid range"):
        plan.validate(tiny_config(corruptions={CORRUPTION: {"domain": {"amount": [0, 2]}}}))
    with pytest.raises(CorruptionError, match="already registered"):
        register_corruption(CORRUPTION, params=[Param("amount", 0.0)], function=fade)


# --------------------------------------------------------------------------- Add a model source


def check_linear(spec: ModelSpec) -> tuple[list, int | None]:
    """The source's check before a run: ``width`` is a positive whole number; 1,000 classes."""
    width = spec.options.get("width", 3)
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        return [("width", f"must be a positive whole number, not {width!r}")], None
    return [], 1000


@pytest.fixture
def toy_source():
    @register_source(
        SOURCE,
        keys={"width", *CHECKPOINT_KEYS},
        check=check_linear,
        fine_tuned=same_source,
        throughput_name=lambda entry: f"linear{entry.get('width', 3)}",
    )
    def build_linear(spec: ModelSpec, device) -> Built:
        width = spec.options.get("width", 3)
        torch.manual_seed(0)
        net = nn.Sequential(
            nn.Conv2d(3, width, 8, stride=8), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(width, 1000)
        )  # fmt: skip
        return Built(net, {"input_size": 32}, {"library": SOURCE}, 1000).apply_checkpoint(spec)

    yield SOURCES[SOURCE]
    unregister_source(SOURCE)
    assert SOURCE not in SOURCES


ENTRY = {"source": SOURCE, "id": "linear", "family": "other", "width": 4}


def test_a_registered_source_reads_its_keys_and_loads_a_model(toy_source):
    spec = ModelSpec.from_config("toy", ENTRY)
    assert spec.options == {"width": 4}
    assert spec.to_config() == ENTRY  # what prediction files record of the model
    with pytest.raises(
        ModelConfigError, match=r"\['repo'\] do not apply to source 'recipe-linear'"
    ):
        ModelSpec.from_config("toy", {**ENTRY, "repo": "a/b"})
    with pytest.raises(ModelConfigError, match=r"\['width'\] do not apply to source 'timm'"):
        ModelSpec.from_config("toy", {"source": "timm", "id": "resnet18", "width": 4})
    model = load_model(spec, "cpu")
    assert model.num_classes == 1000 and model.preprocessing.input_size == 32
    images = torch.zeros((2, 72, 72, 3), dtype=torch.uint8)
    with torch.inference_mode():
        assert model(images).shape == (2, 1000)


def test_a_registered_source_passes_the_config_checks_and_predicts(
    toy_source, toy_corruption, clean_set, tmp_path
):
    config = plan.validate(tiny_config(models={"toy": ENTRY}))
    assert config["models"]["toy"]["source"] == SOURCE
    assert check_models({"toy": ENTRY}) == {
        "toy": {"source": SOURCE, "id": "linear", "classes": 1000}
    }
    with pytest.raises(ModelConfigError, match=r"'models\.toy\.width': must be a positive"):
        check_models({"toy": {**ENTRY, "width": 0}})
    # a shard of the toy corruption, predicted by the toy model
    c = toy_corruption
    manifest = sampling.make_manifest(c, clean_set, 4, 4, seed=1, mode="parameter-uniform")
    shard = testset.generate_shard(manifest, 0, clean_set, c, tmp_path / "shard-00000.parquet")
    spec = ModelSpec.from_config("toy", ENTRY)
    out = predict_shards(
        spec,
        [shard],
        tmp_path / "pred.parquet",
        InferenceOptions(batch_size=2, device="cpu", num_workers=0, progress=False),
    )
    predictions = io.read_table(out)
    assert predictions.column("sample_id").to_pylist() == manifest["sample_id"].tolist()


def test_a_registered_source_is_fine_tuned_and_planned_as_registered(toy_source):
    entry = derived_entry(ENTRY, "results/retrain/r/model.pt", "toy", "r")
    assert entry["source"] == SOURCE and entry["checkpoint"] == "results/retrain/r/model.pt"
    assert work.architecture(ENTRY, {}) == "linear4"
    assert work.architecture(ENTRY, {"linear4": "resnet18"}) == "resnet18"
    # a source registered without fine_tuned cannot be a retraining base
    runs = {"r": {"base": "toy", "corruptions": ["gaussian_noise"]}}
    config = tiny_config(models={"toy": ENTRY}, retrain={"runs": runs})
    plan.validate(config)
    unregister_source(SOURCE)
    register_source(SOURCE, keys=toy_source.keys, check=toy_source.check)(toy_source.build)
    with pytest.raises(ConfigError, match="retrain.runs.r.base.*cannot be fine-tuned"):
        plan.validate(config)


# --------------------------------------------------------------------------- Add a dataset kind


def _image_list(path: str) -> pd.DataFrame:
    return pd.read_csv(path, dtype={"image": str})


def check_image_list(block) -> list[tuple[str, str]]:
    """The kind's own check before a run: every image the list names exists."""
    listing = Path(block["path"])
    for image in _image_list(listing)["image"]:
        if not (listing.parent / image).is_file():
            return [("path", f"image {listing.parent / image} is listed in {listing} but missing")]
    return []


@pytest.fixture
def toy_kind():
    """A kind that reads a CSV ``image,label`` of image files beside it (``dataset.path``: the
    CSV), registered with its listing and its check; unregistered after the test."""

    @register_dataset_kind(
        KIND,
        needs_path="file",
        listing=lambda block: _image_list(block["path"])["image"].tolist(),
        check=check_image_list,
        description="a CSV of image files and their ImageNet-1k labels",
    )
    def read_image_list(request: DatasetRequest):
        folder = Path(request.path).parent
        table = _image_list(request.path)
        return dataset_frame(
            [(name, str(folder / name), int(label)) for name, label in table.to_numpy()]
        )

    yield DATASET_KINDS[KIND]
    unregister_dataset_kind(KIND)
    assert KIND not in DATASET_KINDS


@pytest.fixture
def image_list(tmp_path) -> Path:
    """Two images (ImageNet-1k classes 1 and 7) and the CSV that lists them."""
    from PIL import Image

    rng = np.random.default_rng(0)
    for name in ("b.png", "a.png"):
        Image.fromarray(rng.integers(0, 256, (40, 30, 3), dtype=np.uint8)).save(tmp_path / name)
    path = tmp_path / "images.csv"
    path.write_text("image,label\nb.png,7\na.png,1\n")
    return path


def test_a_registered_kind_is_read_and_makes_a_clean_set(toy_kind, image_list, tmp_path):
    table = loading.load_dataset(DatasetSettings(kind=KIND, path=str(image_list)))
    assert table["image_id"].tolist() == ["a.png", "b.png"] and table["label"].tolist() == [1, 7]
    assert table["path"].tolist() == [str(tmp_path / "a.png"), str(tmp_path / "b.png")]
    index = loading.prepare_clean_set(table, tmp_path / "clean.npy", tmp_path / "clean.parquet")
    assert index["image_id"].tolist() == ["a.png", "b.png"]
    assert np.load(tmp_path / "clean.npy").shape == (2, 224, 224, 3)
    with pytest.raises(DatasetError, match=f"dataset.kind '{KIND}' needs dataset.path"):
        loading.load_dataset(DatasetSettings(kind=KIND))
    with pytest.raises(DatasetError, match=f"only cub200 ships a train/test split, not .*'{KIND}'"):
        loading.load_dataset(DatasetSettings(kind=KIND, path=str(image_list), split="test"))


def test_a_registered_kind_is_checked_listed_and_planned(toy_kind, image_list, tmp_path):
    config = plan.validate(tiny_config(dataset={"kind": KIND, "path": str(image_list)}))
    assert clean_set_size(config) == 2  # from the kind's listing, no image opened
    missing = tmp_path / "no" / "images.csv"
    with pytest.raises(ConfigError, match=f"'dataset.path': file {missing} does not exist"):
        plan.validate(tiny_config(dataset={"kind": KIND, "path": str(missing)}))
    with pytest.raises(ConfigError, match=f"'dataset.path': required for dataset.kind '{KIND}'"):
        plan.validate(tiny_config(dataset={"kind": KIND}))
    (tmp_path / "b.png").unlink()  # the kind's own check names the missing image
    with pytest.raises(ConfigError, match=rf"'dataset.path': image {tmp_path / 'b.png'} is listed"):
        plan.validate(tiny_config(dataset={"kind": KIND, "path": str(image_list)}))
    # listed wherever the kinds are: an unknown kind's error, and not among the pool's kinds
    with pytest.raises(ConfigError, match=rf"'dataset.kind': unknown .*known: .*{KIND}, sun"):
        plan.validate(tiny_config(dataset={"kind": "recipe-image-lists"}))
    pool = {"kind": KIND, "path": str(image_list)}
    with pytest.raises(ConfigError, match=f"'retrain.pool.kind': dataset kind '{KIND}' cannot"):
        plan.validate(tiny_config(retrain={"pool": pool}))
    with pytest.raises(DatasetError, match="already registered"):
        register_dataset_kind(KIND)(toy_kind.read)
