"""Sampling manifests: parameter-uniform and Δv-uniform modes, monotone maps, determinism."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vcrbench.corruptions import Param, build_corruption, get_corruption
from vcrbench.testsets import coverage, measure, sampling, sampling_dvuniform


def darken(image, params, rng):
    return image * (1.0 - params["a"])


@pytest.fixture
def fake_dv(monkeypatch):
    """Δv := (1 - mean(corrupted)/mean(clean))^4 for ``darken``: a^4, far from uniform in a."""

    def fake(clean, corrupted, vif_settings=None, device=None):
        ratio = corrupted.reshape(len(clean), -1).mean(1) / clean.reshape(len(clean), -1).mean(1)
        dv = np.clip(1.0 - ratio, 0.0, 1.0) ** 4
        return 1.0 - dv, dv

    monkeypatch.setattr(measure, "visual_change", fake)
    return fake


@pytest.fixture(scope="module")
def darken_corruption():
    return build_corruption(
        "darken", darken, [Param("a", 0.0, (0.0, 1.0))], source="user", domain={"a": [0, 1]}
    )


# --------------------------------------------------------------------------- parameter-uniform


@pytest.mark.parametrize(("n", "shard_size"), [(1, 1), (10, 3), (25, 25), (40, 7)])
def test_parameter_uniform_manifest_shape_and_columns(clean_set, n, shard_size):
    c = get_corruption("glass_blur")
    m = sampling.make_manifest(c, clean_set, n, shard_size, seed=3, mode="parameter-uniform")
    assert len(m) == n
    assert list(m.columns) == [
        "sample_id",
        "image_id",
        "label",
        "seed",
        "shard",
        "param.sigma",
        "param.max_delta",
        "param.iterations",
    ]
    assert m["sample_id"].tolist() == list(range(n))
    assert (m["shard"] == m["sample_id"] // shard_size).all()
    assert m["shard"].nunique() == -(-n // shard_size)
    for col in ("sample_id", "label", "seed", "shard"):
        assert m[col].dtype == np.int64
    for name, (lo, hi) in c.domain.items():
        assert m[f"param.{name}"].dtype == np.float64
        assert m[f"param.{name}"].between(lo, hi).all()
    labels = dict(zip(clean_set.image_ids, clean_set.labels, strict=True))
    assert (m["label"] == m["image_id"].map(labels)).all()
    assert m["seed"].nunique() == n


def test_manifest_is_deterministic_and_depends_on_the_seed(clean_set):
    c = get_corruption("color_jitter")
    a = sampling.make_manifest(c, clean_set, 30, 8, seed=1, mode="parameter-uniform")
    b = sampling.make_manifest(c, clean_set, 30, 8, seed=1, mode="parameter-uniform")
    pd.testing.assert_frame_equal(a, b)
    other = sampling.make_manifest(c, clean_set, 30, 8, seed=2, mode="parameter-uniform")
    assert not a["param.hue"].equals(other["param.hue"])
    assert not a["seed"].equals(other["seed"])


def test_images_are_balanced_shared_across_corruptions_and_prefix_stable(clean_set):
    gn = sampling.make_manifest(
        get_corruption("gaussian_noise"), clean_set, 50, 10, 0, "parameter-uniform"
    )
    blur = sampling.make_manifest(get_corruption("blur"), clean_set, 50, 10, 0, "parameter-uniform")
    counts = gn["image_id"].value_counts()
    assert set(counts.index) == set(clean_set.image_ids) and counts.max() - counts.min() <= 1
    assert gn["image_id"].equals(blur["image_id"])  # sample i shows the same image everywhere
    assert not gn["seed"].equals(blur["seed"])
    short = sampling.make_manifest(
        get_corruption("gaussian_noise"), clean_set, 20, 10, 0, "parameter-uniform"
    )
    pd.testing.assert_frame_equal(short[["image_id", "seed"]], gn[["image_id", "seed"]].iloc[:20])
    # With N equal to the number of images, each image exactly once (as ImageNet-C).
    once = sampling.make_manifest(
        get_corruption("blur"), clean_set, len(clean_set), 5, 0, "parameter-uniform"
    )
    assert sorted(once["image_id"]) == sorted(clean_set.image_ids)


def test_parameter_uniform_draws_are_uniform_on_the_domain(clean_set):
    from scipy.stats import kstest

    c = get_corruption("frost")
    m = sampling.make_manifest(c, clean_set, 2000, 500, 0, "parameter-uniform")
    for name, (lo, hi) in c.domain.items():
        assert kstest(m[f"param.{name}"], "uniform", args=(lo, hi - lo)).pvalue > 1e-3


def test_bad_arguments_are_named(clean_set):
    c = get_corruption("blur")
    with pytest.raises(ValueError, match="unknown sampling mode 'uniform'"):
        sampling.make_manifest(c, clean_set, 10, 5, 0, "uniform")
    with pytest.raises(ValueError, match="n_samples must be at least 1"):
        sampling.make_manifest(c, clean_set, 0, 5, 0, "parameter-uniform")
    with pytest.raises(ValueError, match="shard_size must be at least 1"):
        sampling.make_manifest(c, clean_set, 10, 0, 0, "parameter-uniform")
    with pytest.raises(ValueError, match=r"unknown dv-uniform option\(s\) \['pilot'\]"):
        sampling.make_manifest(c, clean_set, 10, 5, 0, "dv-uniform", pilot=3)
    # dv-uniform options are accepted in parameter-uniform mode (one config key switches modes).
    a = sampling.make_manifest(c, clean_set, 10, 5, 0, "parameter-uniform", pilot_fraction=0.3)
    pd.testing.assert_frame_equal(
        a, sampling.make_manifest(c, clean_set, 10, 5, 0, "parameter-uniform")
    )


# --------------------------------------------------------------------------- monotone maps


def test_monotone_map_fits_and_inverts():
    gen = np.random.default_rng(0)
    t = gen.random(400)
    v = np.sqrt(t) + gen.normal(0, 0.02, t.size)
    m = sampling_dvuniform.MonotoneMap.fit(t, v)
    assert np.all(np.diff(m.t) > 0) and np.all(np.diff(m.v) > 0)
    grid = np.linspace(0.05, 0.95, 19)
    assert np.abs(m(grid) - np.sqrt(grid)).max() < 0.05
    targets = np.linspace(m.low, m.high, 50)
    np.testing.assert_allclose(m(m.inverse(targets)), targets, atol=1e-9)
    # Beyond the knots: extended to the ends of the path, (0, 0) and (1, high + REACH).
    assert m.inverse([-5.0])[0] == 0.0 and m.inverse([5.0])[0] == 1.0
    assert m.t[-1] < m.inverse([m.high + sampling_dvuniform.REACH / 2])[0] < 1.0


def test_monotone_map_with_plateaus_and_constants():
    t = np.linspace(0, 1, 11)
    v = np.array([0, 0, 0, 0.2, 0.4, 1, 1, 1, 1, 1, 1.0])
    m = sampling_dvuniform.MonotoneMap.fit(t, v)
    assert m.v.tolist() == [0.0, 0.2, 0.4, 1.0]
    assert m.t[0] == pytest.approx(0.1) and m.t[-1] == pytest.approx(0.75)
    flat = sampling_dvuniform.MonotoneMap.fit(t, np.full(11, 0.3))
    assert flat.low == flat.high == pytest.approx(0.3)
    np.testing.assert_allclose(flat.inverse([0.1, 0.3, 0.9]), [0.5 / 3, 0.5, 1.0])


# --------------------------------------------------------------------------- dv-uniform


def test_dv_uniform_flattens_the_dv_distribution(clean_set, darken_corruption, fake_dv):
    n = 1000
    m = sampling.make_manifest(darken_corruption, clean_set, n, 100, 0, "dv-uniform")
    info = m.attrs["sampling"]
    assert len(m) == n and "target_dv" in m.columns
    assert 0 < info["n_pilot"] <= 0.2 * n
    assert info["per_image_maps"] == len(clean_set)  # each image has enough pilot points
    assert np.isnan(m["target_dv"].iloc[: info["pilot_first"]]).all()
    assert np.isfinite(m["target_dv"].iloc[info["n_pilot"] :]).all()

    def measured(frame):
        clean = clean_set.images(frame["image_id"].tolist())
        out = measure.corrupt_batch(
            darken_corruption, clean, {"a": frame["param.a"].to_numpy()}, frame["seed"].to_numpy()
        )
        return fake_dv(clean, out)[1]

    dv = measured(m)
    # The pilot's Δv is the Δv its samples will have in their shards.
    np.testing.assert_allclose(dv[: info["n_pilot"]], info["pilot_dv"])
    uniform = sampling.make_manifest(darken_corruption, clean_set, n, 100, 0, "parameter-uniform")
    dv_u = measured(uniform)
    cov = coverage.coverage(dv, min_count=10)
    cov_u = coverage.coverage(dv_u, min_count=10)
    assert cov["covered_bins"] == 39 and cov_u["covered_bins"] < 30
    counts = cov["counts"][:39]
    assert counts.max() < 3 * counts.mean()  # roughly flat
    # Main-sample targets land close to their measured Δv.
    main = slice(info["n_pilot"], n)
    assert np.median(np.abs(dv[main] - m["target_dv"].to_numpy()[main])) < 0.02


def test_dv_uniform_is_deterministic(clean_set, darken_corruption, fake_dv):
    a = sampling.make_manifest(darken_corruption, clean_set, 200, 64, 5, "dv-uniform")
    b = sampling.make_manifest(darken_corruption, clean_set, 200, 64, 5, "dv-uniform")
    pd.testing.assert_frame_equal(a, b)


def test_dv_uniform_pilot_rounds_fill_short_bins(clean_set, darken_corruption, fake_dv):
    n = 1000
    m = sampling.make_manifest(
        darken_corruption, clean_set, n, 100, 1, "dv-uniform", min_count=4, pilot_fraction=0.05
    )
    info = m.attrs["sampling"]
    assert info["rounds"] >= 1 and info["pilot_short_bins"] == []
    cov = coverage.coverage(np.asarray(info["pilot_dv"]), min_count=4)
    assert cov["covered_bins"] == 39  # the pilot alone guarantees coverage


def test_dv_uniform_tiny_sets_keep_exactly_n_rows(clean_set, darken_corruption, fake_dv):
    for n in (1, 2, 7):
        m = sampling.make_manifest(darken_corruption, clean_set, n, 3, 0, "dv-uniform")
        assert len(m) == n and m["param.a"].between(0, 1).all()


def test_dv_uniform_with_signed_parameters_uses_both_sides(clean_set, fake_dv):
    c = build_corruption(
        "shift",
        lambda img, p, rng: img * (1.0 - abs(p["s"])),
        [Param("s", 0.0, (-1.0, 1.0))],
        source="user",
        domain={"s": [-1, 1]},
    )
    m = sampling.make_manifest(c, clean_set, 300, 100, 0, "dv-uniform")
    assert (m["param.s"] < -0.05).mean() > 0.3 and (m["param.s"] > 0.05).mean() > 0.3


def test_dv_uniform_with_the_real_vif_beats_parameter_uniform(clean_set):
    """shot noise: parameter-uniform photons miss almost all of the Δv range (paper, Table 2)."""
    c = get_corruption("shot_noise")
    n = 120
    res = {}
    for mode in ("parameter-uniform", "dv-uniform"):
        m = sampling.make_manifest(c, clean_set, n, n, 0, mode)
        clean = clean_set.images(m["image_id"].tolist())
        out = measure.corrupt_batch(
            c, clean, {"photons": m["param.photons"].to_numpy()}, m["seed"].to_numpy()
        )
        res[mode] = coverage.coverage(measure.visual_change(clean, out)[1], min_count=1)["covered_bins"]
    assert res["parameter-uniform"] <= 15
    assert res["dv-uniform"] >= 30
