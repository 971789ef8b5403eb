"""How a corrupted image's float pixels become uint8: rounded (the default) or truncated as the
VCR authors' toolbox and ImageNet-C's generator do (``sampling.cast``, a corruption's ``cast``)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from tests.support.shipped import shipped_config
from vcrbench import plan
from vcrbench.corruptions import get_corruption, register_corruption, unregister_corruption
from vcrbench.corruptions.registry import Param
from vcrbench.corruptions.values import cast_uint8, casting
from vcrbench.errors import ConfigError, CorruptionError
from vcrbench.files.provenance import config_hash
from vcrbench.plan import config as pconfig
from vcrbench.plan import definitions


def test_truncation_floors_where_rounding_goes_to_the_nearest_level():
    x = np.array([[-3.0, 0.4, 0.5, 0.6, 1.5, 127.999, 254.9, 255.7]])
    assert cast_uint8(x, "round").tolist() == [[0, 0, 0, 1, 2, 128, 255, 255]]
    assert cast_uint8(x, "truncate").tolist() == [[0, 0, 0, 0, 1, 127, 254, 255]]
    # as the authors' np.uint8 of their clipped float images
    clipped = np.clip(x, 0, 255)
    assert np.array_equal(cast_uint8(x, "truncate"), np.uint8(clipped))
    # casting() sets the cast of a corruption's intermediate images
    with casting("truncate"):
        assert cast_uint8(x).tolist() == cast_uint8(x, "truncate").tolist()
    assert cast_uint8(x).tolist() == cast_uint8(x, "round").tolist()


@pytest.fixture
def half_levels():
    """A user corruption returning every pixel plus 0.6 (and its intermediate cast, if any)."""

    def plus(image, p, rng):
        return image.astype(np.float64) + p["shift"]

    register_corruption(
        "plus_shift", params=[Param("shift", 0.0, (0.0, 1.0))], domain={"shift": (0.0, 1.0)},
        function=plus,
    )  # fmt: skip
    yield "plus_shift"
    unregister_corruption("plus_shift")


def test_the_cast_option_reaches_the_corruption(half_levels):
    image = np.arange(48, dtype=np.uint8).reshape(4, 4, 3)
    rounded = get_corruption(half_levels).apply(image, {"shift": 0.6}, seed=0)
    truncated = get_corruption(half_levels, {"cast": "truncate"}).apply(
        image, {"shift": 0.6}, seed=0
    )
    assert np.array_equal(rounded, image + 1)
    assert np.array_equal(truncated, image)
    assert get_corruption(half_levels).describe().get("cast") is None
    assert get_corruption(half_levels, {"cast": "truncate"}).describe()["cast"] == "truncate"
    with pytest.raises(CorruptionError, match="cast must be one of"):
        get_corruption(half_levels, {"cast": "floor"})


def test_truncation_lowers_a_built_in_corruption_and_glass_blurs_intermediate_image():
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, (40, 40, 3), dtype=np.uint8)
    for name, params in (
        ("gaussian_blur", {"sigma": 1.3}),
        ("glass_blur_toolbox", {"sigma": 0.8, "max_delta": 0.0}),
    ):
        rounded = get_corruption(name).apply(image, params, seed=3)
        truncated = get_corruption(name, {"cast": "truncate"}).apply(image, params, seed=3)
        diff = rounded.astype(int) - truncated.astype(int)
        # never higher; lower by about half a level on average (one level or, through the
        # intermediate image of glass blur, two)
        assert diff.min() >= 0 and 0.3 < diff.mean() < 1.2, name
    # glass blur's intermediate cast follows too: its output differs from the rounded
    # intermediate truncated only at the end
    glass = get_corruption("glass_blur_toolbox", {"cast": "truncate"})
    from vcrbench.corruptions.imagenet_c import glass_blur_toolbox

    params = {"sigma": 0.8, "max_delta": 0.0}
    end_only = cast_uint8(glass_blur_toolbox(image, params, np.random.default_rng(0)), "truncate")
    assert not np.array_equal(glass.apply(image, params, seed=0), end_only)


def test_sampling_cast_reaches_every_corruption_and_its_hash_only_when_set(tmp_path):
    cfg = plan.validate(shipped_config("config.yaml", tmp_path))
    assert "cast" not in cfg["sampling"]  # not filled in: a default run's params are as before
    name = next(iter(cfg["corruptions"]))
    before = pconfig.corruption_options(cfg, name)
    assert "cast" not in before and pconfig.cast(cfg) == "round"
    raw = shipped_config("config.yaml", tmp_path)
    raw["sampling"]["cast"] = "truncate"
    truncating = plan.validate(raw)
    after = pconfig.corruption_options(truncating, name)
    assert after["cast"] == "truncate"
    assert get_corruption(name, after).cast == "truncate"
    assert config_hash({"corruption": after}) != config_hash({"corruption": before})
    # a corruption's own cast wins
    raw["corruptions"][name] = {"cast": "round"}
    assert pconfig.corruption_options(plan.validate(raw), name)["cast"] == "round"
    bad = copy.deepcopy(raw)
    bad["sampling"]["cast"] = "floor"
    with pytest.raises(ConfigError, match="cast"):
        plan.validate(bad)


def test_definitions_row_says_which_cast(tmp_path):
    cfg = plan.validate(shipped_config("config.yaml", tmp_path))
    rows = {r["definition"]: r for r in definitions.definitions(cfg)}
    row = rows["cast of corrupted images to uint8"]
    assert row["this_run"] == "rounded to the nearest level" and row["matches_paper"] == "no"
    assert row["config_key"] == "sampling.cast"
    cfg["sampling"]["cast"] = "truncate"
    row = {r["definition"]: r for r in definitions.definitions(cfg)}[
        "cast of corrupted images to uint8"
    ]
    assert row["this_run"].startswith("truncated") and row["matches_paper"] == "yes"


def test_paper_config_casts_as_the_authors_code(tmp_path):
    cfg = plan.validate(shipped_config("paper.yaml", tmp_path))
    assert pconfig.cast(cfg) == "truncate"
    assert all(
        get_corruption(name, pconfig.corruption_options(cfg, name)).cast == "truncate"
        for name in cfg["corruptions"]
    )
    rows = {r["definition"]: r for r in definitions.definitions(cfg)}
    assert rows["cast of corrupted images to uint8"]["matches_paper"] == "yes"
