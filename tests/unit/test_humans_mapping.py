"""Δv of fixed conditions: Geirhos' manipulations, determinism, monotonicity, reference image."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.ndimage import gaussian_filter

from vcrbench.datasets import loading
from vcrbench.humans import mapping
from vcrbench.humans.geirhos import reader
from vcrbench.humans.manipulation import GEIRHOS_MEAN_GREY, geirhos_lowpass, to_uint8
from vcrbench.humans.trial_schema import HumanDataError
from vcrbench.settings import DatasetSettings
from vcrbench.settings import HumanMappingSettings as Settings


@pytest.fixture(scope="module")
def clean_set(tmp_path_factory):
    root = tmp_path_factory.mktemp("clean")
    ds = loading.load_dataset(DatasetSettings())
    ds = ds[ds["image_id"].isin(["skimage-chelsea", "skimage-coffee"])]
    loading.prepare_clean_set(
        ds, root / "images.npy", root / "index.parquet", DatasetSettings(resize=128, crop=128)
    )
    return loading.CleanSet.open(root / "images.npy", root / "index.parquet")


def test_lowpass_is_geirhos_filter():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, size=(40, 48, 3), dtype=np.uint8)
    grey = img.astype(np.float64) / 255.0 @ np.array([0.2125, 0.7154, 0.0721])
    out = geirhos_lowpass(img, 0)
    assert out.shape == img.shape and out.dtype == np.uint8
    assert (out[..., 0] == out[..., 1]).all() and (out[..., 1] == out[..., 2]).all()
    assert np.array_equal(out[..., 0], to_uint8(grey))
    want = gaussian_filter(grey, 3.0, mode="constant", cval=0.4423, truncate=4.0)
    assert np.array_equal(
        geirhos_lowpass(img, 3)[..., 0], np.floor(np.clip(want, 0, 1) * 255 + 0.5)
    )
    # constant padding with Geirhos' mean grey: a white image darkens at its border only
    white = np.full((64, 64, 3), 255, np.uint8)
    blurred = geirhos_lowpass(white, 5)[..., 0]
    assert blurred[32, 32] == 255 and blurred[0, 0] < 200
    flat = np.full((32, 32, 3), round(GEIRHOS_MEAN_GREY * 255), np.uint8)
    assert np.abs(geirhos_lowpass(flat, 10).astype(int) - flat).max() <= 1
    with pytest.raises(ValueError, match="sigma"):
        geirhos_lowpass(img, -1)


def test_to_uint8_rounds_half_up():
    assert to_uint8(np.array([0.5 / 255, 1.49 / 255, 1.2, -0.1])).tolist() == [1, 1, 255, 0]


@pytest.fixture(scope="module")
def noise_cdv(clean_set):
    conds = mapping.conditions_of(reader.read_geirhos("noise"))
    return mapping.condition_dv(conds, clean_set, 5, Settings(draws=2))


@pytest.fixture(scope="module")
def lowpass_cdv(clean_set):
    conds = mapping.conditions_of(reader.read_geirhos("lowpass"))
    # deterministic: one draw per image, as stages.map_conditions asks for it
    return mapping.condition_dv(conds, clean_set, 5, Settings(draws=1))


def _medians(cdv, conditions):
    med = cdv.groupby("condition")["dv"].median()
    return np.array([med[c] for c in conditions])


def test_dv_increases_with_width_and_sigma(noise_cdv, lowpass_cdv):
    noise = _medians(noise_cdv, ["0.00", "0.03", "0.05", "0.10", "0.20", "0.35", "0.60", "0.90"])
    low = _medians(lowpass_cdv, ["0", "1", "3", "5", "7", "10", "15", "40"])
    assert np.all(np.diff(noise) > 0) and np.all(np.diff(low) > 0)
    # per image too, not only the medians
    for cdv, order in ((lowpass_cdv, ["0", "1", "3", "5", "7", "10", "15", "40"]),):
        for _, g in cdv.groupby("image_id"):
            assert np.all(np.diff(g.set_index("condition").loc[order, "dv"].to_numpy()) > 0)
    # greyscale at 30% contrast is far from the colour original already at w = 0
    assert noise[0] > 0.2
    assert ((noise_cdv["dv"] >= 0) & (noise_cdv["dv"] <= 1)).all()


def test_condition_dv_is_deterministic(clean_set, noise_cdv):
    conds = mapping.conditions_of(reader.read_geirhos("noise"))
    sub = conds[conds["condition"].isin(["0.10", "0.60"])]
    again = mapping.condition_dv(sub, clean_set, 5, Settings(draws=2))
    ref = noise_cdv[noise_cdv["condition"].isin(["0.10", "0.60"])].reset_index(drop=True)
    np.testing.assert_array_equal(again["dv"].to_numpy(), ref["dv"].to_numpy())
    np.testing.assert_array_equal(again["seed"].to_numpy(), ref["seed"].to_numpy())
    other = mapping.condition_dv(sub, clean_set, 6, Settings(draws=2))
    assert not np.array_equal(other["dv"].to_numpy(), ref["dv"].to_numpy())
    assert list(again.columns) == [
        "corruption", "condition", "param.width", "image_id", "draw", "seed", "vif", "dv",
    ]  # fmt: skip
    assert len(again) == 2 * 2 * 2  # conditions x images x draws


def test_zero_condition_reference(clean_set, noise_cdv):
    conds = mapping.conditions_of(reader.read_geirhos("noise"))
    sub = conds[conds["condition"].isin(["0.00", "0.10"])]
    zero = mapping.condition_dv(sub, clean_set, 5, Settings(reference="zero-condition", draws=1))
    at0 = zero[zero["condition"] == "0.00"]["dv"].to_numpy()
    assert np.all(at0 < 1e-9)
    orig = noise_cdv[(noise_cdv["condition"] == "0.10") & (noise_cdv["draw"] == 0)]["dv"].to_numpy()
    assert np.all(zero[zero["condition"] == "0.10"]["dv"].to_numpy() < orig)


def test_summarise_and_options(lowpass_cdv, clean_set):
    s = mapping.summarise(lowpass_cdv)
    assert s["condition"].tolist() == ["0", "1", "3", "5", "7", "10", "15", "40"]
    assert (s["n"] == 2).all() and (s["dv_q05"] <= s["dv_median"]).all()
    with pytest.raises(ValueError, match="reference"):
        Settings(reference="grey")
    with pytest.raises(ValueError, match="n_images"):
        mapping.sample_image_ids(["a", "b"], 0, 0)
    assert mapping.sample_image_ids(list("edcba"), 3, 1) == mapping.sample_image_ids(list("abcde"), 3, 1)
    conds = mapping.conditions_of(reader.read_geirhos("lowpass")).head(2)
    bad = conds.drop(columns="param.sigma")
    with pytest.raises(HumanDataError, match="param.sigma"):
        mapping.condition_dv(bad, clean_set, 0)


def test_manipulate_scales_sigma_and_compresses_as_the_settings_say():
    rng = np.random.default_rng(1)
    img = rng.integers(0, 256, size=(32, 40, 3), dtype=np.uint8)
    scaled = mapping.manipulate(
        "geirhos_lowpass", img, {"sigma": 1.5}, 0, Settings(lowpass_sigma_scale=2.0)
    )
    assert np.array_equal(scaled, geirhos_lowpass(img, 3.0))
    assert not np.array_equal(scaled, mapping.manipulate("geirhos_lowpass", img, {"sigma": 1.5}, 0))
    jpeg = mapping.manipulate("geirhos_lowpass", img, {"sigma": 1.5}, 0, Settings(jpeg_quality=75))
    assert np.array_equal(jpeg, mapping.jpeg_roundtrip(geirhos_lowpass(img, 1.5), 75))


def darken(image, p, rng):
    """A user corruption for the test: scale towards black, plus a little noise."""
    out = image.astype(np.float64) * (1.0 - p["amount"])
    return out + rng.uniform(0, 2, size=image.shape)


def test_user_corruption_at_fixed_conditions(clean_set):
    import pandas as pd

    conds = pd.DataFrame(
        {"corruption": "darken", "condition": ["a", "b", "c"], "param.amount": [0.1, 0.5, 0.9]}
    )
    opts = {"darken": {"function": f"{__name__}:darken", "domain": {"amount": [0.0, 1.0]}}}
    cdv = mapping.condition_dv(conds, clean_set, seed=0, corruptions_config=opts)
    assert np.all(np.diff(_medians(cdv, ["a", "b", "c"])) > 0)
    zero = mapping.condition_dv(
        conds, clean_set, 0, Settings(reference="zero-condition"), corruptions_config=opts
    )
    # the least-manipulated condition (same seed) is the reference: its own Δv is 0
    assert _medians(zero, ["a"])[0] < 1e-9 < _medians(cdv, ["a"])[0]
    assert _medians(zero, ["c"])[0] < _medians(cdv, ["c"])[0]
    with pytest.raises(Exception, match="darken"):
        mapping.condition_dv(conds, clean_set, seed=0)  # unknown without its config entry
