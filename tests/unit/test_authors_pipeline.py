"""The VCR authors' pipeline as options: OpenCV's uint8 grey before VIF (``vif.grey``) and
corruption and Δv at the stored resolution (``dataset.resolution: stored``); and
benchmarks/bench_table2.py on a folder of images."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from scipy.ndimage import gaussian_filter

from vcrbench import plan, vif
from vcrbench.corruptions import get_corruption
from vcrbench.datasets.listing import dataset_frame
from vcrbench.datasets.loading import (
    CLEAN_STORED,
    CleanSet,
    bounded_size,
    prepare_clean_set,
    read_embedded_dataset,
    resize_center_crop,
)
from vcrbench.errors import ConfigError
from vcrbench.files import io
from vcrbench.plan import config as cfg
from vcrbench.settings import DatasetSettings, VifSettings
from vcrbench.testsets import measure, sampling, testset

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _photo(h: int, w: int, seed: int) -> np.ndarray:
    """A smooth random colour image with edges and texture (VIF needs structure)."""
    rng = np.random.default_rng(seed)
    base = gaussian_filter(rng.normal(size=(h, w, 3)), sigma=(4, 4, 0))
    base += 0.3 * rng.normal(size=(h, w, 3))
    base = (base - base.min()) / (base.max() - base.min())
    return (base * 255).astype(np.uint8)


@pytest.fixture(scope="module")
def photos(tmp_path_factory) -> tuple[Path, Path]:
    """Four JPEG files of different sizes (one longer than 512, one below 224) and their labels."""
    folder = tmp_path_factory.mktemp("photos")
    sizes = [(375, 500), (600, 800), (200, 150), (333, 500)]
    wnids = ["n01440764", "n01443537", "n01484850", "n01491361"]
    for k, (h, w) in enumerate(sizes):
        Image.fromarray(_photo(h, w, k)).save(folder / f"{wnids[k]}_{k}.JPEG", quality=95)
    labels = folder / "labels.csv"
    pd.DataFrame({"file": [f"{wnids[k]}_{k}.JPEG" for k in range(4)], "label": wnids}).to_csv(
        labels, index=False
    )
    return folder, labels


# ------------------------------------------------------------------ grey conversion


def test_uint8_grey_is_opencvs_conversion_bit_for_bit():
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, size=(300, 300, 3), dtype=np.uint8)
    # the corners of the cube and the rounding edges: every grey level's neighbours
    edges = np.array([[r, g, b] for r in (0, 1, 127, 128, 254, 255) for g in (0, 128, 255)
                      for b in (0, 77, 255)], dtype=np.uint8)  # fmt: skip
    for rgb in (pixels, edges.reshape(1, -1, 3)):
        assert np.array_equal(vif.grey_uint8(rgb), cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))


def test_uint8_grey_rounds_the_luma_and_float_grey_does_not():
    rgb = np.array([[[10, 200, 33], [255, 0, 0]]], dtype=np.uint8)
    luma = rgb.astype(float) @ np.array(vif.LUMA_WEIGHTS)
    assert np.allclose(vif.grey(rgb, "float"), luma)
    assert np.array_equal(vif.grey(rgb, "uint8"), np.round(luma))  # 127.44 -> 127, 76.245 -> 76
    with pytest.raises(ValueError, match="grey conversion must be one of"):
        vif.grey(rgb, "float32")


def test_delta_v_with_uint8_grey_is_vif_of_the_rounded_images():
    a = _photo(96, 96, 1)
    b = np.clip(a.astype(int) + 9, 0, 255).astype(np.uint8)
    want = vif.vif(vif.grey_uint8(a).astype(float), vif.grey_uint8(b).astype(float))
    got_vif, got_dv = vif.delta_v(a, b, VifSettings(grey="uint8"))
    assert got_vif == pytest.approx(want, abs=1e-12)
    assert got_dv != pytest.approx(vif.delta_v(a, b)[1], abs=1e-9)  # the float grey differs


# ------------------------------------------------------------------ stored resolution


def test_bounded_size_keeps_the_stored_image_within_its_bounds():
    small, large, tiny = _photo(375, 500, 0), _photo(600, 800, 1), _photo(50, 200, 2)
    assert bounded_size(small, 512) is small  # as stored
    assert bounded_size(large, 512).shape == (384, 512, 3)
    assert bounded_size(large, None) is large
    assert bounded_size(tiny, 512).shape == (72, 288, 3)  # VIF's smallest side
    with pytest.raises(ValueError, match="max_side must be at least min_side=72"):
        bounded_size(small, 50)


def _clean_sets(photos, tmp_path):
    folder, labels = photos
    table = dataset_frame(
        [
            (f, str(folder / f), k)
            for k, f in enumerate(sorted(p.name for p in folder.glob("*.JPEG")))
        ]
    )
    crop = tmp_path / "crop"
    stored = tmp_path / "stored"
    crop.mkdir(), stored.mkdir()
    prepare_clean_set(table, crop / "images.npy", crop / "index.parquet")
    prepare_clean_set(
        table, stored / "images.npy", stored / "index.parquet",
        DatasetSettings(resolution="stored", stored_max_side=512),
    )  # fmt: skip
    return (
        table,
        CleanSet.open(crop / "images.npy", crop / "index.parquet"),
        CleanSet.open(stored / "images.npy", stored / "index.parquet"),
    )


def test_stored_clean_set_keeps_each_image_at_its_bounded_size(photos, tmp_path):
    table, crop, stored = _clean_sets(photos, tmp_path)
    assert not crop.stored and stored.stored
    assert stored.view == (256, 224)
    for path, image_id in zip(table["path"], table["image_id"], strict=True):
        original = np.asarray(Image.open(path).convert("RGB"))
        want = bounded_size(original, 512)
        assert np.array_equal(stored.stored_image(image_id), want)
        # the models' clean view is the crop of that stored image, the same size as before
        assert np.array_equal(stored.image(image_id), resize_center_crop(want, 256, 224))
        assert stored.image(image_id).shape == crop.image(image_id).shape == (224, 224, 3)
    with pytest.raises(ValueError, match="keeps no stored images"):
        crop.stored_image(table["image_id"][0])


def test_stored_pipeline_corrupts_and_measures_at_the_stored_size_and_shows_the_crop(
    photos, tmp_path
):
    table, crop, stored = _clean_sets(photos, tmp_path)
    c = get_corruption("gaussian_blur", {"domain_set": "paper"})
    ids = list(table["image_id"])
    params = {p: np.full(len(ids), np.mean(d)) for p, d in c.domain.items()}
    seeds = np.arange(len(ids))
    shown_crop, _, dv_crop = measure.corrupt_and_measure(c, crop, ids, params, seeds)
    shown, vifs, dv = measure.corrupt_and_measure(c, stored, ids, params, seeds)
    assert shown.shape == shown_crop.shape == (len(ids), 224, 224, 3)
    for i, image_id in enumerate(ids):
        full = stored.stored_image(image_id)
        corrupted = c.apply(full, {p: float(v[i]) for p, v in params.items()}, int(seeds[i]))
        assert np.array_equal(shown[i], resize_center_crop(corrupted, 256, 224))
        assert dv[i] == pytest.approx(measure.visual_change(full[None], corrupted[None])[1][0])
    assert not np.allclose(dv, dv_crop)  # the same blur changes a larger image less
    assert measure.pipeline_of(stored, VifSettings()) == {"resolution": "stored"}
    assert measure.pipeline_of(crop, VifSettings()) == {}


def test_the_vif_settings_reach_every_measurement(photos, tmp_path):
    _, crop, _ = _clean_sets(photos, tmp_path)
    ids = crop.image_ids[:2]
    c = get_corruption("brightness", {"domain_set": "paper"})
    params, seeds = {p: np.full(2, np.mean(d)) for p, d in c.domain.items()}, np.arange(2)
    uint8 = VifSettings(grey="uint8")
    _, _, dv = measure.corrupt_and_measure(c, crop, ids, params, seeds, vif_settings=uint8)
    shown, _, dv_float = measure.corrupt_and_measure(c, crop, ids, params, seeds)
    want = measure.visual_change(crop.images(ids), shown, uint8)[1]
    assert np.allclose(dv, want) and not np.allclose(dv, dv_float)
    assert measure.pipeline_of(crop, uint8) == {"grey": "uint8"}
    assert measure.pipeline_of(crop, VifSettings()) == {}


def test_manifests_and_shards_of_a_stored_clean_set_follow_its_pipeline(photos, tmp_path):
    _, _, stored = _clean_sets(photos, tmp_path)
    uint8 = VifSettings(grey="uint8")
    c = get_corruption("gaussian_noise", {"domain_set": "paper"})
    manifest = sampling.make_manifest(
        c, stored, 6, 3, seed=5, mode="dv-stratified", vif_settings=uint8
    )
    path = testset.generate_shard(manifest, 0, stored, c, tmp_path / "shard.parquet", uint8)
    shard = io.read_parquet(path)
    rows = manifest[manifest["shard"] == 0]
    assert (shard["height"] == 224).all() and (shard["width"] == 224).all()
    # the shard's Δv is the one the manifest measured, both at the stored size with uint8 grey
    assert np.allclose(shard["dv"], rows["measured_dv"])
    first = rows.iloc[0]
    full = stored.stored_image(first["image_id"])
    corrupted = c.apply(full, {"sigma": first["param.sigma"]}, int(first["seed"]))
    want = measure.visual_change(full[None], corrupted[None], uint8)[1][0]
    assert shard["dv"].iloc[0] == pytest.approx(want)
    assert io.read_metadata(path)["resolution"] == "stored"
    assert io.read_metadata(path)["grey"] == "uint8"


# ------------------------------------------------------------------ config


def _config(dataset=None, vif_block=None) -> dict:
    return {
        "dataset": {"kind": "embedded", **(dataset or {})},
        "corruptions": {"brightness": {}},
        "vif": vif_block or {},
        "models": {"m": {"source": "timm", "id": "resnet18"}},
    }


def test_the_options_default_off_and_leave_the_jobs_params_as_they_were():
    config = plan.validate(_config())
    assert "resolution" not in config["dataset"] and "grey" not in config["vif"]
    assert cfg.dataset_settings(config).resolution == "crop" and cfg.grey(config) == "float"
    assert cfg.measurement_params(config) == {} and not cfg.dataset_settings(config).stored
    assert plan.Plan(config).clean_stored_output() == {}
    # the jobs type the settings back from their params: the schema's defaults
    params = {**cfg.measurement_params(config), "vif_variant": config["vif"]["variant"]}
    assert VifSettings.of_job(params) == cfg.vif_settings(config) == VifSettings()
    assert VifSettings() == VifSettings(variant="kumar", grey="float")


def test_the_authors_pipeline_is_two_keys():
    config = plan.validate(_config({"resolution": "stored"}, {"grey": "uint8"}))
    assert cfg.dataset_settings(config).stored_max_side == 512
    assert cfg.measurement_params(config) == {"grey": "uint8"}
    assert plan.Plan(config).clean_stored_output() == {"stored": "results/dataset/stored.npy"}
    params = {**cfg.measurement_params(config), "vif_variant": "vifvec"}
    assert VifSettings.of_job(params) == VifSettings(variant="vifvec", grey="uint8")
    assert cfg.vif_settings(config) == VifSettings(grey="uint8")


def test_vif_settings_refuse_a_value_the_schema_does_not_list():
    with pytest.raises(ValueError, match=r"grey conversion must be one of \['float', 'uint8'\]"):
        VifSettings(grey="uint16")
    with pytest.raises(ValueError, match="vif variant must be one of"):
        VifSettings(variant="vifp")
    with pytest.raises(TypeError, match="must be a vcrbench.settings.VifSettings, not dict"):
        vif.delta_v(_photo(80, 80, 1), _photo(80, 80, 2), {"grey": "uint8"})


def test_a_stored_clean_set_is_bounded_by_the_schemas_default(tmp_path):
    records = read_embedded_dataset().iloc[:2]
    settings = DatasetSettings(resolution="stored")  # stored_max_side left out: the schema's 512
    prepare_clean_set(records, tmp_path / "images.npy", tmp_path / "index.parquet", settings)
    meta = io.read_metadata(tmp_path / "index.parquet")
    assert meta["resolution"] == "stored" and meta["stored_max_side"] == 512
    assert np.load(tmp_path / CLEAN_STORED, mmap_mode="r").shape == (2, 512, 512, 3)


@pytest.mark.parametrize(
    "dataset, vif_block, message",
    [
        ({}, {"grey": "uint16"}, r"config key 'vif.grey': 'uint16' is not one of \['float', 'uint8'\]"),
        ({"resolution": "full"}, {}, r"config key 'dataset.resolution': 'full' is not one of"),
        ({"resolution": "stored", "stored_max_side": 64}, {}, r"'dataset.stored_max_side': 64 is less than the minimum of 72"),
        ({"stored_max_side": 512}, {}, r"'dataset.stored_max_side': only with dataset.resolution: stored"),
    ],
)  # fmt: skip
def test_bad_options_are_named_by_their_key(dataset, vif_block, message):
    with pytest.raises(ConfigError, match=message):
        plan.validate(_config(dataset, vif_block))


# ------------------------------------------------------------------ bench_table2 on a folder


def test_bench_table2_measures_a_folder_of_images_both_ways(photos, tmp_path, monkeypatch):
    folder, labels = photos
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    threads = {k: v for k, v in os.environ.items() if k.endswith("_NUM_THREADS")}
    sys.modules.pop("bench_table2", None)
    import bench_table2

    # Importing the benchmark leaves the importer's thread settings alone (its workers limit
    # their own): later subprocesses of this process, e.g. a fine-tuning killed and resumed and
    # compared with one run in process, keep the threads they had.
    assert {k: v for k, v in os.environ.items() if k.endswith("_NUM_THREADS")} == threads

    out = tmp_path / "table2.json"
    bench_table2.main(
        [
            "--dataset", "folder", "--path", str(folder), "--labels", str(labels),
            "--n", "12", "--workers", "1", "--corruptions", "brightness",
            "--resolution", "crop,stored", "--grey", "float,uint8", "--imagenet-c-jpeg", "85",
            "--json", str(out),
        ]
    )  # fmt: skip
    found = json.loads(out.read_text())
    pipelines = {(r["pipeline"], r["imagenet_c_pipeline"]) for r in found["rows"]}
    assert pipelines == {
        (f"{res}/{g}", f"{res}/{j}{g}") for res in ("crop", "stored") for g in ("float", "uint8")
        for j in ("", "jpeg85/")
    }  # fmt: skip
    result = found["results"][0]
    for key, dv in result["vcr_dv"].items():
        assert len(dv) == 12, key
    for dv in result["imagenet_c_dv"].values():
        assert len(dv) == 4 * 5  # four images at five severities
    # the same draws, measured where each pipeline says: crop and stored differ
    assert result["vcr_dv"]["crop/float"] != result["vcr_dv"]["stored/float"]
    with pytest.raises(SystemExit):
        bench_table2.main(["--dataset", "folder", "--path", str(folder)])


def test_bench_table2_draws_the_toolbox_variants_when_asked(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import bench_table2

    bench_table2.prepare_images(str(tmp_path), bench_table2.read_embedded_dataset().head(2))
    crop = [("crop", "float")]
    frost = bench_table2.job("frost", str(tmp_path), 6, crop, [], True, toolbox=True)
    assert frost["vcr_variant"] == "toolbox"
    assert (
        bench_table2.job("frost", str(tmp_path), 6, crop, [], True, toolbox=False)["vcr_variant"]
        == ""
    )
    # a row whose VCR set has no variant is drawn as before; motion blur's pair has one
    assert (
        bench_table2.job("brightness", str(tmp_path), 6, crop, [], True, toolbox=True)[
            "vcr_variant"
        ]
        == ""
    )
    motion = bench_table2.job("motion_blur", str(tmp_path), 6, crop, [], True, toolbox=True)
    assert (motion["vcr_corruption"], motion["vcr_variant"]) == ("motion_blur_line", "toolbox")
    assert bench_table2._parse_args(["--toolbox-variants"]).toolbox_variants


def _bench_table2(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    sys.modules.pop("bench_table2", None)
    import bench_table2

    return bench_table2


def test_bench_table2_measures_the_leads_metrics_as_defined(monkeypatch):
    bench = _bench_table2(monkeypatch)
    assert bench.pipeline_key("crop", "float") == "crop/float"
    assert bench.pipeline_key("crop", "float", 85, "truncate", "vif-unit") == (
        "crop/truncate/jpeg85/float/vif-unit"
    )
    assert bench.pipeline_key("crop", "uint8", None, "round", "ssim") == "crop/ssim"
    clean = _photo(96, 96, 5)
    shown = np.clip(gaussian_filter(clean.astype(float), (1.5, 1.5, 0)), 0, 255).astype(np.uint8)
    a, b = vif.grey(clean, "float"), vif.grey(shown, "float")
    got = {m: bench.delta_v_by(m, clean, shown, "float") for m in bench.METRICS}
    assert got["vif"] == pytest.approx(measure.visual_change(clean, shown)[1])
    for metric, (x, y) in {
        "vif-swapped": (b, a), "vif-unit": (a / 255, b / 255), "vif-swapped-unit": (b / 255, a / 255)
    }.items():  # fmt: skip
        assert got[metric] == pytest.approx(np.clip(1 - vif.vif(x, y), 0, 1)), metric
    # VIF's fixed noise variance makes the scale matter; the swap is not symmetric
    assert abs(got["vif-unit"] - got["vif"]) > 0.01 and abs(got["vif-swapped"] - got["vif"]) > 0.01
    from skimage.color import rgb2gray
    from skimage.metrics import structural_similarity

    g1, g2 = rgb2gray(clean), rgb2gray(shown)
    assert got["ssim"] == pytest.approx(
        1 - structural_similarity(g1, g2, data_range=1.0 * (g1.max() - g2.min()))
    )
    assert got["ssim-mixed"] > 0.9  # the corrupted grey on 0-255 against the clean on [0, 1]
    assert bench.delta_v_by("ssim", clean, clean, "float") == 0.0
    with pytest.raises(ValueError, match="metric must be one of"):
        bench.delta_v_by("psnr", clean, shown, "float")
    # the ImageNet-C threshold as a share of the paper's 250,000 samples
    assert bench.imagenet_c_min_count(5000, 5000, None) == 2
    assert bench.imagenet_c_min_count(5000, 5000, 0.1) == 4
    assert bench.imagenet_c_min_count(5000, 1035, 0.1) == 1


def test_bench_table2_casts_measures_and_keeps_the_human_classes(tmp_path, monkeypatch):
    bench = _bench_table2(monkeypatch)
    folder = tmp_path / "photos"
    folder.mkdir()
    # a tabby cat and an airliner are in the 16 human classes (cat, airplane); a tench is not
    wnids = ["n02123045", "n02690373", "n01440764"]
    for k, wnid in enumerate(wnids):
        Image.fromarray(_photo(240, 260, 10 + k)).save(folder / f"{wnid}.JPEG", quality=95)
    labels = tmp_path / "labels.csv"
    pd.DataFrame({"file": [f"{w}.JPEG" for w in wnids], "label": wnids}).to_csv(labels, index=False)
    out = tmp_path / "table2.json"
    bench.main(
        [
            "--dataset", "folder", "--path", str(folder), "--labels", str(labels),
            "--n", "6", "--workers", "1", "--corruptions", "brightness", "--human-classes",
            "--cast", "round,truncate", "--metric", "vif,ssim", "--imagenet-c-metric",
            "vif-swapped", "--imagenet-c-jpeg", "85", "--imagenet-c-jpeg-only",
            "--imagenet-c-share", "0.1", "--json", str(out),
        ]
    )  # fmt: skip
    found = json.loads(out.read_text())
    result = found["results"][0]
    assert found["human_classes"] and found["imagenet_c_share"] == 0.1
    assert (
        set(result["imagenet_c_ids"])
        == set(result["vcr_ids"])
        == {"n02123045.JPEG", "n02690373.JPEG"}
    )
    assert set(result["vcr_dv"]) == {
        "crop/float", "crop/ssim", "crop/truncate/float", "crop/truncate/ssim"
    }  # fmt: skip
    assert set(result["imagenet_c_dv"]) == {
        f"crop/{c}jpeg85/{m}" for c in ("", "truncate/")
        for m in ("float", "ssim", "float/vif-swapped")
    }  # fmt: skip
    assert len(result["imagenet_c_dv"]["crop/jpeg85/float"]) == 2 * 5
    # truncation lowers pixels: the same draws, other Δv
    assert result["vcr_dv"]["crop/float"] != result["vcr_dv"]["crop/truncate/float"]
    assert {r["imagenet_c_min_count"] for r in found["rows"]} == {1}
    with pytest.raises(SystemExit):
        bench.main(["--metric", "psnr"])


def test_vif_keeps_a_bounded_number_of_filter_spectra_over_many_image_sizes():
    from vcrbench.vif import _backends

    backend = _backends.get_backend(None)
    rng = np.random.default_rng(3)
    for k in range(_backends.MAX_SPECTRA + 8):
        a = rng.integers(0, 256, (80 + k, 90, 3), dtype=np.uint8)
        vif.delta_v(a, a)
    assert len(backend._spectra) <= _backends.MAX_SPECTRA
    # a size seen before gives the same value after its spectra were dropped and made again
    a = rng.integers(0, 256, (80, 90, 3), dtype=np.uint8)
    b = np.clip(a.astype(int) + 20, 0, 255).astype(np.uint8)
    first = vif.delta_v(a, b)[1]
    for k in range(_backends.MAX_SPECTRA):
        c = rng.integers(0, 256, (100 + k, 90, 3), dtype=np.uint8)
        vif.delta_v(c, c)
    assert vif.delta_v(a, b)[1] == first
