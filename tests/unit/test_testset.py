"""Shards and ImageNet-C sets: schema, Δv on the exact pixels, atomicity, coverage."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vcrbench import bins
from vcrbench.corruptions import CorruptionError, Param, build_corruption, get_corruption
from vcrbench.files import io
from vcrbench.settings import CoverageSettings
from vcrbench.testsets import coverage, sampling, testset
from vcrbench.vif import delta_v


@pytest.fixture(scope="module")
def noise():
    return get_corruption("gaussian_noise")


@pytest.fixture(scope="module")
def manifest(clean_set, noise):
    return sampling.make_manifest(noise, clean_set, 20, 8, seed=0, mode="parameter-uniform")


SHARD_COLUMNS = [
    "sample_id",
    "image_id",
    "label",
    "corruption",
    "param.sigma",
    "seed",
    "vif",
    "dv",
    "bin",
    "height",
    "width",
    "image",
]


def test_shard_schema_and_dv_on_the_written_pixels(tmp_path, clean_set, noise, manifest):
    path = testset.generate_shard(
        manifest, 1, clean_set, noise, tmp_path / "shard-00001.parquet", batch_size=3
    )
    shard = io.read_parquet(path)
    assert list(shard.columns) == SHARD_COLUMNS
    rows = manifest[manifest["shard"] == 1]
    assert shard["sample_id"].tolist() == rows["sample_id"].tolist()
    for col in ("image_id", "label", "seed", "param.sigma"):
        assert shard[col].tolist() == rows[col].tolist()
    assert (shard["corruption"] == "gaussian_noise").all()
    assert (shard["height"] == 72).all() and (shard["width"] == 72).all()
    images = io.images_from_table(io.read_table(path))
    clean = clean_set.images(shard["image_id"].tolist())
    vif, dv = delta_v(clean, images)
    np.testing.assert_array_equal(shard["vif"], vif)
    np.testing.assert_array_equal(shard["dv"], dv)
    assert (shard["bin"] == np.floor(shard["dv"] * 39)).all()
    # The stored pixels are the corruption's output for the stored parameters and seed.
    for i in range(len(shard)):
        expected = noise.apply(clean[i], {"sigma": shard["param.sigma"][i]}, int(shard["seed"][i]))
        np.testing.assert_array_equal(images[i], expected)
    meta = io.read_metadata(path)
    assert meta["corruption"]["name"] == "gaussian_noise" and meta["n"] == len(shard)


def test_shards_are_byte_identical_when_regenerated(tmp_path, clean_set, noise, manifest):
    a = testset.generate_shard(manifest, 0, clean_set, noise, tmp_path / "a.parquet")
    b = testset.generate_shard(manifest, 0, clean_set, noise, tmp_path / "b.parquet")
    assert a.read_bytes() == b.read_bytes()
    # A manifest written and read back (as the workflow does) gives the same shard.
    io.write_parquet(manifest, tmp_path / "manifest.parquet")
    again = io.read_parquet(tmp_path / "manifest.parquet")
    c = testset.generate_shard(again, 0, clean_set, noise, tmp_path / "c.parquet")
    assert a.read_bytes() == c.read_bytes()


def test_failure_mid_shard_leaves_no_file_and_other_shards_intact(tmp_path, clean_set, manifest):
    state = {"armed": False, "calls": 0}

    def flaky(image, params, rng):
        if state["armed"]:
            state["calls"] += 1
            if state["calls"] == 3:  # the second batch of two
                raise RuntimeError("simulated crash in the middle of a shard")
        return image * (1 - params["sigma"] / 16)

    c = build_corruption(
        "gaussian_noise",
        flaky,
        [Param("sigma", 0.0, (0.0, 16.0))],
        source="user",
        domain={"sigma": [0, 16]},
    )
    out = tmp_path / "testsets"
    first = testset.generate_shard(
        manifest, 0, clean_set, c, out / "shard-00000.parquet", batch_size=2
    )
    before = first.read_bytes()
    state["armed"] = True
    with pytest.raises(RuntimeError, match="simulated crash"):
        testset.generate_shard(manifest, 1, clean_set, c, out / "shard-00001.parquet", batch_size=2)
    assert sorted(p.name for p in out.iterdir()) == ["shard-00000.parquet"]  # no temporary left
    assert first.read_bytes() == before
    # Rerunning the failed shard alone completes it.
    state["armed"] = False
    testset.generate_shard(manifest, 1, clean_set, c, out / "shard-00001.parquet", batch_size=2)
    assert len(io.read_parquet(out / "shard-00001.parquet")) == 8


def test_out_of_domain_parameter_in_a_manifest_is_named(tmp_path, clean_set, noise, manifest):
    bad = manifest.copy()
    bad.loc[bad.index[9], "param.sigma"] = 99.0
    with pytest.raises(
        CorruptionError, match=r"'gaussian_noise'.*'sigma' = 99.0 is outside its domain"
    ):
        testset.generate_shard(bad, 1, clean_set, noise, tmp_path / "s.parquet")
    assert not (tmp_path / "s.parquet").exists() and list(tmp_path.iterdir()) == []


def test_manifest_of_another_corruption_or_missing_shard_is_refused(
    tmp_path, clean_set, noise, manifest
):
    with pytest.raises(ValueError, match=r"\['param.sigma'\] do not match corruption 'blur'"):
        testset.generate_shard(
            manifest, 0, clean_set, get_corruption("blur"), tmp_path / "x.parquet"
        )
    with pytest.raises(ValueError, match="shard 7 of corruption 'gaussian_noise' is empty"):
        testset.generate_shard(manifest, 7, clean_set, noise, tmp_path / "x.parquet")
    assert list(tmp_path.iterdir()) == []


def test_imagenet_c_set(tmp_path, clean_set):
    c = get_corruption("defocus_blur", {"domain": {"radius": [0, 2]}})  # excludes the severities
    path = testset.generate_imagenet_c(c, clean_set, tmp_path / "ic.parquet", seed=0, n_images=4)
    df = io.read_parquet(path)
    assert list(df.columns) == [
        "sample_id",
        "image_id",
        "label",
        "corruption",
        "param.radius",
        "param.alias_blur",
        "severity",
        "seed",
        "vif",
        "dv",
        "bin",
        "height",
        "width",
        "image",
    ]
    assert len(df) == 20 and df["sample_id"].tolist() == list(range(20))
    assert df.groupby("severity")["image_id"].apply(list).map(tuple).nunique() == 1
    for sev, params in enumerate(c.imagenet_c, start=1):
        rows = df[df["severity"] == sev]
        assert (rows["param.radius"] == params["radius"]).all()
        assert (rows["param.alias_blur"] == params["alias_blur"]).all()
    # Δv grows with severity for every image (defocus blur is deterministic).
    table = df.pivot(index="image_id", columns="severity", values="dv")
    assert (table.diff(axis=1).iloc[:, 1:] > 0).all().all()
    with pytest.raises(ValueError, match="'blur' has no ImageNet-C severities"):
        testset.generate_imagenet_c(
            get_corruption("blur"), clean_set, tmp_path / "b.parquet", seed=0
        )


@pytest.mark.parametrize("shard_size", [4, 7])
def test_imagenet_c_shards_together_are_the_whole_set(tmp_path, clean_set, noise, shard_size):
    whole = io.read_parquet(
        testset.generate_imagenet_c(noise, clean_set, tmp_path / "ic.parquet", seed=3, n_images=3)
    )
    n_shards = -(-15 // shard_size)  # 3 images x 5 severities
    parts = [
        io.read_parquet(
            testset.generate_imagenet_c_shard(
                noise,
                clean_set,
                k,
                shard_size,
                n_shards,
                tmp_path / f"s{k}.parquet",
                seed=3,
                n_images=3,
            )
        )
        for k in range(n_shards)
    ]
    assert all(len(part) <= shard_size for part in parts)
    # the same samples, seeds and pixels whatever the shard size
    pd.testing.assert_frame_equal(pd.concat(parts, ignore_index=True), whole)


def test_imagenet_c_shards_beyond_the_set_are_empty_and_too_few_are_refused(
    tmp_path, clean_set, noise
):
    # planned for more images than the clean set holds (images skipped): the last shard is empty
    path = testset.generate_imagenet_c_shard(
        noise, clean_set, 3, 5, 4, tmp_path / "empty.parquet", seed=0, n_images=3
    )
    empty = io.read_parquet(path)
    assert len(empty) == 0 and "severity" in empty.columns and "image" in empty.columns
    with pytest.raises(ValueError, match=r"15 samples .* but 2 shards of 5 were planned"):
        testset.generate_imagenet_c_shard(
            noise, clean_set, 0, 5, 2, tmp_path / "few.parquet", seed=0, n_images=3
        )
    with pytest.raises(ValueError, match="shard 4 is not one of the 4 planned"):
        testset.generate_imagenet_c_shard(noise, clean_set, 4, 5, 4, tmp_path / "x.parquet", seed=0)
    assert not (tmp_path / "few.parquet").exists()


# --------------------------------------------------------------------------- coverage


def test_bin_index_and_scaled_min_count():
    assert bins.bin_index([0.0, 0.02, 1 / 39, 0.5, 0.9999, 1.0], 40).tolist() == [
        0,
        0,
        1,
        19,
        38,
        39,
    ]
    with pytest.raises(ValueError, match="NaN"):
        bins.bin_index([0.1, np.nan], 40)
    assert bins.scaled_min_count(50_000, 20, 50_000) == 20
    assert bins.scaled_min_count(100_000, 20, 50_000) == 40
    assert bins.scaled_min_count(10_000, 20, 50_000) == 4
    assert bins.scaled_min_count(2_500, 20, 50_000) == 1
    assert bins.scaled_min_count(10, 20, 50_000) == 1


def test_coverage_counts_bins_and_uses_the_denominator():
    dv = np.concatenate([np.full(20, 0.01), np.full(19, 0.5), np.full(25, 1.0), np.full(20, 0.99)])
    res = coverage.coverage(dv, min_count=20)
    assert res["covered_bins"] == 2  # bins 0 and 38; bin 19 has 19; bin 39 (dv = 1) not counted
    assert res["coverage"] == pytest.approx(2 / 39)
    assert res["counts"][39] == 25 and res["n_images"] == len(dv)
    assert coverage.coverage(dv, 20, CoverageSettings(denominator=40))["covered_bins"] == 3
    assert coverage.coverage(dv, min_count=19)["covered_bins"] == 3
    full = coverage.coverage(np.linspace(0, 0.9999, 39 * 5), min_count=5)
    assert full["coverage"] == 1.0
    with pytest.raises(ValueError, match="denominator"):
        CoverageSettings(denominator=41)
    with pytest.raises(ValueError, match="min_count"):
        coverage.coverage(dv, 0)


def test_coverage_settings_are_the_coverage_block_with_the_schemas_defaults():
    """The ``coverage`` block, typed: its defaults are the schema's (the paper's 40 bins, 20
    images at 50,000, k/39), a config's values go through whole, and the table says them."""
    assert CoverageSettings() == CoverageSettings(40, 20, 50_000, 39)
    block = {"bins": 20, "min_count": 5, "reference_n": 1_000, "denominator": 19}
    settings = CoverageSettings.of_config(block)
    assert settings == CoverageSettings(20, 5, 1_000, 19)
    assert CoverageSettings.of_config({"min_count": 5}) == CoverageSettings(min_count=5)
    assert coverage.threshold(1_000, settings) == 5 and coverage.threshold(100, settings) == 1
    dv = np.linspace(0, 0.9999, 19 * 5)
    res = coverage.coverage(dv, 5, settings)
    assert (res["bins"], res["denominator"], res["covered_bins"]) == (20, 19, 19)


def test_coverage_table_and_histograms_from_files(tmp_path, clean_set, noise, manifest):
    shards = [
        testset.generate_shard(manifest, s, clean_set, noise, tmp_path / f"shard-{s:05d}.parquet")
        for s in range(3)
    ]
    ic = testset.generate_imagenet_c(noise, clean_set, tmp_path / "ic.parquet", seed=0, n_images=3)
    table = coverage.coverage_table({"gaussian_noise": shards}, {"gaussian_noise": ic})
    assert list(table.columns) == [
        "corruption",
        "source",
        "n_images",
        "coverage",
        "covered_bins",
        "bins",
        "min_count",
        "denominator",
    ]
    assert table["source"].tolist() == ["vcr", "imagenet-c"]
    assert table["n_images"].tolist() == [20, 15]
    dv = pd.concat([io.read_parquet(p, columns=["dv"]) for p in shards])["dv"]
    assert table["covered_bins"][0] == coverage.coverage(dv, min_count=1)["covered_bins"]
    hist = coverage.dv_histograms({"gaussian_noise": shards}, {"gaussian_noise": ic})
    assert len(hist) == 80 and hist.groupby("source")["count"].sum().to_dict() == {
        "imagenet-c": 15,
        "vcr": 20,
    }
    assert hist.groupby("source")["fraction"].sum().round(12).tolist() == [1.0, 1.0]


def _dv_file(path, counts):
    """A Parquet file whose dv column puts counts[j] images in bin j (at the bin's centre)."""
    dv = np.concatenate([np.full(c, min(1.0, (j + 0.5) / 39)) for j, c in enumerate(counts)])
    pd.DataFrame({"dv": dv}).to_parquet(path)
    return str(path)


def test_coverage_threshold_is_the_papers_for_both_sets(tmp_path):
    """Section 4.1/Table 2: 20 images per bin for 50,000 VCR and 5 x 50,000 ImageNet-C images
    alike, so an ImageNet-C bin of 20..99 images is covered (a threshold scaled by its own size,
    100, would not count it); smaller runs scale the one threshold by the VCR set's size."""
    assert coverage.threshold(50_000) == 20
    assert coverage.threshold(240) == 1
    assert coverage.threshold(5_000) == 2
    vcr_counts = [50_000 - 38 * 19] + [19] * 38  # only bin 0 reaches 20
    ic_counts = [0] * 39
    ic_counts[:13] = [20] * 13  # 13 bins at exactly 20
    ic_counts[13:26] = [99] * 13
    ic_counts[38] = 250_000 - sum(ic_counts)
    vcr = {"contrast": [_dv_file(tmp_path / "vcr.parquet", vcr_counts)]}
    ic = {"contrast": _dv_file(tmp_path / "ic.parquet", ic_counts)}
    table = coverage.coverage_table(vcr, ic).set_index("source")
    assert table.loc["vcr", "n_images"] == 50_000 and table.loc["imagenet-c", "n_images"] == 250_000
    assert table["min_count"].tolist() == [20, 20]
    assert table.loc["vcr", "covered_bins"] == 1
    assert table.loc["imagenet-c", "covered_bins"] == 27
    assert table.loc["imagenet-c", "coverage"] == pytest.approx(27 / 39)
    # a run of 5,000 VCR images: threshold 2 for both, whatever the ImageNet-C set's size
    small = {"contrast": [_dv_file(tmp_path / "small.parquet", [128] * 39 + [8])]}
    table = coverage.coverage_table(small, ic)
    assert table["min_count"].tolist() == [2, 2]
    assert table["covered_bins"].tolist() == [39, 27]


def test_coverage_of_the_first_n_uniform_draws_of_a_stratified_set(tmp_path):
    """A dv-stratified manifest's ``uniform_dv`` (the Δv of its first N draws c ~ U(C)) gets rows
    of its own, source ``vcr-parameter-uniform``, at the VCR set's threshold."""
    kept = [_dv_file(tmp_path / "kept.parquet", [1282] * 39)]  # 49,998: every bin covered
    draws = np.concatenate([np.full(49_000, 0.9), np.full(998, 0.05)])
    manifest = tmp_path / "manifest.parquet"
    pd.DataFrame({"uniform_dv": draws}).to_parquet(manifest)
    table = coverage.coverage_table(
        {"shot_noise": kept}, uniform_draws={"shot_noise": manifest}
    ).set_index("source")
    assert list(table.index) == ["vcr", "vcr-parameter-uniform"]
    assert table.loc["vcr", "covered_bins"] == 39
    assert table.loc["vcr-parameter-uniform", "covered_bins"] == 2
    assert table.loc["vcr-parameter-uniform", "min_count"] == 20
    hist = coverage.dv_histograms({"shot_noise": kept}, uniform_draws={"shot_noise": manifest})
    counts = hist[hist["source"] == "vcr-parameter-uniform"].set_index("bin")["count"]
    assert counts.sum() == 49_998 and counts[35] == 49_000
