"""The corruptions' variant ``toolbox``: the VCR authors' toolbox's own function and draw for the
paper's VCR sets (config/paper.yaml), while the ImageNet-C sets keep ImageNet-C's function."""

from __future__ import annotations

import importlib.resources

import cv2
import numpy as np
import pytest
from PIL import Image

from vcrbench.corruptions import CorruptionError, get_corruption, list_variants
from vcrbench.corruptions import imagenet_c as icx

#: The corruptions whose paper VCR sets the authors' toolbox made with its own function or draw.
TOOLBOX_MADE = {
    "blur",
    "median_blur",
    "motion_blur_line",
    "glass_blur_toolbox",
    "frost",
    "defocus_blur",
}
PAPER = {"domain_set": "paper"}
TOOLBOX = {"variant": "toolbox", **PAPER}
#: The kernel-size corruptions and the toolbox's odd sizes (Albumentations' blur_limit).
ODD_SIZES = {
    "blur": list(range(3, 16, 2)),
    "median_blur": list(range(3, 22, 2)),
    "motion_blur_line": list(range(3, 50, 2)),
}


@pytest.fixture(scope="module")
def image() -> np.ndarray:
    """A 64x96 natural image (scikit-image's astronaut, resized: not the frost's aspect)."""
    from skimage import data

    return np.asarray(Image.fromarray(data.astronaut()).resize((96, 64), Image.BILINEAR))


def frequencies(values: np.ndarray, support) -> np.ndarray:
    return np.array([np.count_nonzero(values == v) for v in support]) / len(values)


def assert_uniform_on(values: np.ndarray, support) -> None:
    """Every value in ``support`` and each as often as the others (within 5 standard errors)."""
    support = np.asarray(support, dtype=np.float64)
    assert set(np.unique(values)) == set(support)
    p = 1.0 / len(support)
    se = np.sqrt(p * (1 - p) / len(values))
    assert np.all(np.abs(frequencies(values, support) - p) < 5 * se)


# --------------------------------------------------------------------------- kernel sizes


@pytest.mark.parametrize("name", sorted(ODD_SIZES))
def test_the_toolbox_draws_odd_kernel_sizes_only_each_equally_likely(name):
    c = get_corruption(name, TOOLBOX)
    ksize = c.sample_uniform(60_000, np.random.default_rng(0))["ksize"]
    assert_uniform_on(ksize, ODD_SIZES[name])
    # without the variant the size is continuous (the project's default)
    plain = get_corruption(name, PAPER).sample_uniform(1000, np.random.default_rng(0))["ksize"]
    assert np.count_nonzero(plain % 2 != 1) > 900


@pytest.mark.parametrize("name", sorted(ODD_SIZES))
def test_the_odd_size_path_and_checks(name):
    c = get_corruption(name, TOOLBOX)
    t = np.linspace(0, 1, 101)
    path = c.path(t, {p: np.full(t.shape, 0.9) for p in c.param_names})["ksize"]
    assert (
        set(np.unique(path)) <= set(ODD_SIZES[name])
        and path[0] == 3
        and path[-1] == max(ODD_SIZES[name])
    )
    assert np.all(np.diff(path) >= 0)
    assert c.identity["ksize"] == 3  # the smallest odd size in the domain
    with pytest.raises(CorruptionError, match=rf"'{name}'.*'ksize' = 7.5 is not one of its values"):
        c.validate({**c.identity, "ksize": 7.5})
    with pytest.raises(CorruptionError, match="holds none of its values"):
        get_corruption(name, {**TOOLBOX, "domain": {"ksize": [3.2, 4.8]}})


@pytest.mark.parametrize("name", ["blur", "median_blur"])
def test_at_an_odd_size_the_toolbox_variant_is_the_same_function(name, image):
    toolbox, plain = get_corruption(name, TOOLBOX), get_corruption(name, PAPER)
    for k in (3.0, 7.0, 15.0):
        assert np.array_equal(
            toolbox.apply(image, {"ksize": k}, 0), plain.apply(image, {"ksize": k}, 0)
        )


def test_a_continuous_draw_is_unchanged_by_the_variants_machinery():
    # the default's draws: rng.uniform per parameter, in order (the refactor rule)
    c = get_corruption("motion_blur_line", PAPER)
    got = c.sample_uniform(50, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    for p in c.params:
        assert np.array_equal(got[p.name], rng.uniform(*c.domain[p.name], size=50))
    # a discrete parameter takes as many draws, so the others are the same draws as without it
    toolbox = get_corruption("motion_blur_line", TOOLBOX).sample_uniform(
        50, np.random.default_rng(3)
    )
    for name in ("x0", "y0", "x1", "y1"):
        assert np.array_equal(toolbox[name], got[name])


# --------------------------------------------------------------------------- glass blur


def test_the_toolbox_draws_max_delta_as_randint_1_to_9():
    c = get_corruption("glass_blur_toolbox", TOOLBOX)
    assert c.domain["max_delta"] == (1.0, 9.0)
    draws = c.sample_uniform(90_000, np.random.default_rng(1))
    assert_uniform_on(draws["max_delta"], range(1, 10))  # np.random.randint(1, 10): 1/9 each
    assert len(np.unique(draws["sigma"])) == 90_000  # σ stays continuous
    # the project's default: continuous max_delta (randomised rounding inside the function)
    plain = get_corruption("glass_blur_toolbox", PAPER).sample_uniform(
        1000, np.random.default_rng(1)
    )
    assert np.count_nonzero(plain["max_delta"] % 1 != 0) > 900


def test_glass_blur_toolbox_at_an_integer_max_delta_is_the_same_function(image):
    toolbox, plain = (
        get_corruption("glass_blur_toolbox", TOOLBOX),
        get_corruption("glass_blur_toolbox", PAPER),
    )
    params = {"sigma": 0.7, "max_delta": 4.0}
    assert np.array_equal(toolbox.apply(image, params, 5), plain.apply(image, params, 5))


# --------------------------------------------------------------------------- frost


def toolbox_frost_layers(height: int, width: int) -> list[np.ndarray]:
    """The toolbox's frost.py steps: PIL open, resize((w, h)), ``[..., [2, 1, 0]]``; the first
    five photographs (``np.random.randint(5)``)."""
    layers = []
    for name in icx.FROST_FILES[:5]:
        ref = importlib.resources.files("imagecorruptions") / "frost" / name
        with importlib.resources.as_file(ref) as path, Image.open(path) as photo:
            layers.append(np.asarray(photo.resize((width, height)))[..., [2, 1, 0]])
    return layers


def test_the_toolbox_frost_resizes_the_photograph_where_imagenet_c_crops_it(image):
    height, width = image.shape[:2]
    layers = toolbox_frost_layers(height, width)
    toolbox = get_corruption("frost", TOOLBOX)
    plain = get_corruption("frost", PAPER)
    only_frost = {"image_weight": 0.0, "frost_weight": 1.0}  # the layer itself
    seen = set()
    for seed in range(40):
        out = toolbox.apply(image, only_frost, seed, within="limits")
        match = [i for i, layer in enumerate(layers) if np.array_equal(out, layer)]
        # one of the first five photographs, resized whole (frost2 and frost3 are the same)
        assert match, seed
        seen |= set(match)
        cropped = plain.apply(image, only_frost, seed, within="limits")
        assert not any(np.array_equal(cropped, layer) for layer in layers)
    assert seen == set(range(5))  # the sixth never drawn, the five all drawn
    # the blend as the toolbox's: clip(a·x + b·frost)
    params = {"image_weight": 0.6, "frost_weight": 0.5}
    out = toolbox.apply(image, params, 0)
    expected = [np.clip(0.6 * image + 0.5 * layer.astype(float), 0, 255) for layer in layers]
    assert any(np.array_equal(out, np.rint(e).astype(np.uint8)) for e in expected)


# --------------------------------------------------------------------------- defocus blur


def test_the_toolbox_defocus_alias_grid_starts_at_0_and_includes_it():
    c = get_corruption("defocus_blur", TOOLBOX)
    assert c.domain["alias_blur"] == (0.0, 1.0)
    assert get_corruption("defocus_blur", PAPER).domain["alias_blur"] == (0.01, 1.0)
    alias = c.sample_uniform(300_000, np.random.default_rng(2))["alias_blur"]
    grid = np.linspace(0, 1, 1000)  # the toolbox's np.linspace(0, 1, TRANSFORMATION_LEVEL)
    assert np.array_equal(np.unique(alias), grid)  # every grid value drawn, 0 and 1 included
    zeros = np.count_nonzero(alias == 0)
    assert abs(zeros - 300) < 5 * np.sqrt(300)  # probability 1/1000, as the toolbox's
    c.validate({"radius": 3.0, "alias_blur": 0.0})
    with pytest.raises(CorruptionError, match="'alias_blur' = 0.5 is not one of its values"):
        c.validate({"radius": 3.0, "alias_blur": 0.5})


def test_the_toolbox_defocus_is_the_disk_at_the_drawn_radius(image):
    from imagecorruptions.corruptions import disk

    c = get_corruption("defocus_blur", TOOLBOX)
    for radius, alias in ((2.5, 0.0), (6.3, 500 / 999), (9.5, 1.0)):
        kernel = disk(radius=radius, alias_blur=alias)  # the toolbox's disk is the same code
        channels = [cv2.filter2D(image[..., d] / 255.0, -1, kernel) for d in range(3)]
        expected = np.clip(np.stack(channels, axis=2), 0, 1) * 255
        out = c.apply(image, {"radius": radius, "alias_blur": alias}, 0)
        assert np.array_equal(out, np.rint(expected).astype(np.uint8)), radius
    # σ = 0 is OpenCV's σ from the kernel size (0.8 for 3x3): a blur, not the sharpest disk
    at_zero = c.apply(image, {"radius": 0.0, "alias_blur": 0.0}, 0)
    sharp = c.apply(image, {"radius": 0.0, "alias_blur": 1 / 999}, 0)
    assert np.abs(at_zero.astype(int) - image).mean() > np.abs(sharp.astype(int) - image).mean()
    # the project's defocus interpolates between integer radii: another kernel at 2.5
    plain = get_corruption("defocus_blur", PAPER).apply(
        image, {"radius": 2.5, "alias_blur": 0.1}, 0
    )
    assert not np.array_equal(plain, c.apply(image, {"radius": 2.5, "alias_blur": 100 / 999}, 0))


# --------------------------------------------------------------------------- ImageNet-C sets


@pytest.mark.parametrize("name", ["frost", "defocus_blur"])
def test_the_imagenet_c_sets_keep_imagenet_cs_function(name, image):
    toolbox = get_corruption(name, TOOLBOX)
    plain = get_corruption(name, PAPER)
    ic = toolbox.for_imagenet_c()
    assert ic.function is plain.function and ic.params == plain.params and not ic.variant
    assert toolbox.function is not plain.function
    for seed, severity in enumerate(plain.imagenet_c):
        assert np.array_equal(
            ic.apply(image, severity, seed, within="limits"),
            plain.apply(image, severity, seed, within="limits"),
        )
    assert toolbox.describe()["variant"] == "toolbox" and "variant" not in ic.describe()
    assert get_corruption(name).for_imagenet_c() == get_corruption(name)


def test_the_imagenet_c_shards_use_imagenet_cs_function(monkeypatch):
    from vcrbench.testsets import testset

    used = []
    monkeypatch.setattr(testset, "_write_set", lambda corruption, *a, **k: used.append(corruption))
    frost = get_corruption("frost", TOOLBOX)
    testset._write_imagenet_c(frost, None, None, "out", "kumar", None, 1, "", {})
    assert used[0].function is icx.frost and used[0].variant == ""


# --------------------------------------------------------------------------- options


def test_variant_errors_name_the_corruption_and_the_known_variants():
    with pytest.raises(CorruptionError, match="'frost' has no variant 'toolbx'.*toolbox"):
        get_corruption("frost", {"variant": "toolbx"})
    with pytest.raises(CorruptionError, match="'gaussian_noise' has no variant.*none"):
        get_corruption("gaussian_noise", {"variant": "toolbox"})
    with pytest.raises(CorruptionError, match="only for built-in corruptions"):
        get_corruption(
            "mine",
            {"function": "numpy:copy", "domain": {"a": [0, 1]}, "variant": "toolbox"},
        )


def test_the_toolbox_variants_are_registered_where_the_toolbox_made_the_paper_sets():
    for name in TOOLBOX_MADE:
        assert "toolbox" in list_variants(name), name
    assert list_variants("gaussian_noise") == {}


def test_a_config_names_a_variant_and_a_wrong_one_is_a_config_error(tmp_path):
    from tests.support.shipped import shipped_config
    from vcrbench import plan

    cfg = shipped_config("config.yaml", tmp_path)
    cfg["corruptions"]["frost"] = {"variant": "toolbx"}
    with pytest.raises(ValueError, match=r"corruptions.frost.*no variant 'toolbx'.*'toolbox'"):
        plan.validate(cfg)
    cfg["corruptions"]["frost"] = {"variant": "toolbox"}
    assert plan.validate(cfg)["corruptions"]["frost"] == {"variant": "toolbox"}
    paper = plan.validate(shipped_config("paper.yaml", tmp_path))["corruptions"]
    toolbox = {name for name, entry in paper.items() if (entry or {}).get("variant") == "toolbox"}
    assert toolbox == TOOLBOX_MADE
