"""Corruptions: registry, domains, determinism, fidelity to imagecorruptions / Albumentations /
Geirhos et al., and the continuous generalisation of integer internals."""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from PIL import Image

from vcrbench.corruptions import (
    CorruptionError,
    Param,
    calibrated_domains,
    get_corruption,
    list_corruptions,
    register_corruption,
    registry,
)
from vcrbench.corruptions import imagenet_c as icx

PAPER_14 = {
    "gaussian_noise",
    "shot_noise",
    "impulse_noise",
    "glass_blur",
    "gaussian_blur",
    "defocus_blur",
    "motion_blur",
    "brightness",
    "frost",
    "blur",
    "median_blur",
    "hue_saturation_value",
    "color_jitter",
    "uniform_noise",
}
IMAGENET_C = {
    "gaussian_noise",
    "shot_noise",
    "impulse_noise",
    "glass_blur",
    "gaussian_blur",
    "defocus_blur",
    "motion_blur",
    "brightness",
    "frost",
}
#: The built-ins beyond the paper's 14 names that this module checks like them.
BUILTIN = PAPER_14 | {"motion_blur_line", "glass_blur_toolbox"}
NOISE = {"gaussian_noise", "shot_noise", "impulse_noise", "uniform_noise"}
BLUR = {"blur", "median_blur", "gaussian_blur", "glass_blur", "defocus_blur"}
# Corruptions whose identity parameters are not an exact identity (see the domains file).
NOT_IDENTITY = {"shot_noise", "uniform_noise"}
RANDOM = {
    "gaussian_noise",
    "shot_noise",
    "impulse_noise",
    "glass_blur",
    "glass_blur_toolbox",
    "motion_blur",
    "frost",
    "uniform_noise",
    "color_jitter",
}


@pytest.fixture(scope="module")
def image() -> np.ndarray:
    """A 64x64 natural image (scikit-image's astronaut, downsampled)."""
    from skimage import data

    return np.asarray(Image.fromarray(data.astronaut()).resize((64, 64), Image.BILINEAR))


@pytest.fixture(scope="module")
def image224() -> np.ndarray:
    from skimage import data

    from vcrbench.datasets.loading import resize_center_crop

    return resize_center_crop(data.chelsea(), 256, 224)


@pytest.fixture
def global_numpy_state():
    """Seed numpy's global state for the reference library only, and restore it afterwards."""
    state = np.random.get_state()  # noqa: NPY002 - the reference library only has global state
    yield
    np.random.set_state(state)  # noqa: NPY002


def mid_params(c) -> dict[str, float]:
    """A point well inside the domain, away from the identity."""
    return {
        k: float(v[0])
        for k, v in c.path(np.array([0.3]), {p: np.array([0.9]) for p in c.param_names}).items()
    }


# --------------------------------------------------------------------------- registry


def test_registry_lists_the_papers_14_with_their_sources_and_classes():
    assert PAPER_14 <= set(list_corruptions())
    for name in PAPER_14:
        c = get_corruption(name)
        assert c.name == name
        assert (c.imagenet_c is not None) == (name in IMAGENET_C)
        expected = "noise" if name in NOISE else "blur" if name in BLUR else None
        assert c.similarity_class == expected
        if name in IMAGENET_C:
            assert c.source == "imagenet-c" and len(c.imagenet_c) == 5
        elif name == "uniform_noise":
            assert c.source == "geirhos2018"
        else:
            assert c.source == "albumentations"


def test_imagenet_c_severities_are_the_published_ones():
    assert [s["sigma"] for s in get_corruption("gaussian_noise").imagenet_c] == [
        0.08,
        0.12,
        0.18,
        0.26,
        0.38,
    ]
    assert [s["photons"] for s in get_corruption("shot_noise").imagenet_c] == [60, 25, 12, 5, 3]
    assert get_corruption("glass_blur").imagenet_c[2] == {
        "sigma": 1,
        "max_delta": 2,
        "iterations": 3,
    }
    assert get_corruption("frost").imagenet_c[4] == {"image_weight": 0.6, "frost_weight": 0.75}
    assert get_corruption("defocus_blur").imagenet_c[0] == {"radius": 3, "alias_blur": 0.1}


def test_every_builtin_has_a_calibrated_domain_with_its_reason_and_contains_imagenet_c():
    domains = calibrated_domains()
    for name in BUILTIN:
        c = get_corruption(name)
        entry = domains[name]
        assert set(entry["domain"]) == set(c.param_names)
        assert entry["reason"].strip()
        assert {"dv_mild", "dv_severe"} <= set(entry["measured"])  # calibrate_domains.py --write
        for severity in c.imagenet_c or []:
            c.validate(severity)  # inside the calibrated domain, not only the valid range


def test_unknown_corruption_lists_known_names():
    with pytest.raises(CorruptionError, match="unknown corruption 'gaussian_nois'.*gaussian_noise"):
        get_corruption("gaussian_nois")


def test_unknown_option_is_named():
    with pytest.raises(CorruptionError, match="unknown option.*'colour'"):
        get_corruption("blur", {"colour": 1})


def test_config_entry_keys_that_belong_to_sampling_are_accepted():
    c = get_corruption("blur", {"n_samples": 10, "reason": "narrower for a test"})
    assert c.reason == "narrower for a test"


def test_domain_override_and_its_errors():
    c = get_corruption("gaussian_noise", {"domain": {"sigma": [0.0, 0.5]}, "reason": "test"})
    assert c.domain["sigma"] == (0.0, 0.5)
    assert get_corruption("gaussian_noise").domain["sigma"] != (0.0, 0.5)  # registry unchanged
    with pytest.raises(CorruptionError, match="'gaussian_noise'.*'sigma'.*valid range"):
        get_corruption("gaussian_noise", {"domain": {"sigma": [-1.0, 0.5]}})
    with pytest.raises(CorruptionError, match="unknown parameter 'radius'"):
        get_corruption("gaussian_noise", {"domain": {"radius": [0, 1]}})
    with pytest.raises(CorruptionError, match="low <= high"):
        get_corruption("gaussian_noise", {"domain": {"sigma": [0.5, 0.1]}})
    with pytest.raises(CorruptionError, match="only for user corruptions"):
        get_corruption("gaussian_noise", {"imagenet_c": []})


def test_parameter_outside_domain_names_corruption_and_key(image):
    c = get_corruption("gaussian_blur", {"domain": {"sigma": [0.0, 2.0]}})
    with pytest.raises(
        CorruptionError, match=r"'gaussian_blur'.*'sigma' = 3\.0 is outside its domain"
    ):
        c.apply(image, {"sigma": 3.0}, 0)
    with pytest.raises(CorruptionError, match="'sigma' is missing"):
        c.apply(image, {}, 0)
    with pytest.raises(CorruptionError, match=r"unknown parameter\(s\) \['radius'\]"):
        c.apply(image, {"sigma": 1.0, "radius": 2.0}, 0)
    with pytest.raises(CorruptionError, match="'sigma' = nan"):
        c.apply(image, {"sigma": float("nan")}, 0)
    with pytest.raises(CorruptionError, match="not a number"):
        c.apply(image, {"sigma": "one"}, 0)
    # The fixed ImageNet-C severities are checked against the valid range only.
    assert c.apply(image, {"sigma": 3.0}, 0, within="limits").shape == image.shape


def test_bad_image_and_seed_are_rejected(image):
    c = get_corruption("gaussian_noise")
    with pytest.raises(CorruptionError, match="uint8"):
        c.apply(image.astype(np.float32), {"sigma": 0.1}, 0)
    with pytest.raises(CorruptionError, match="HxWx3"):
        c.apply(image[..., 0], {"sigma": 0.1}, 0)
    with pytest.raises(CorruptionError, match="HxWx3"):
        c.apply(np.dstack([image, image[..., :1]]), {"sigma": 0.1}, 0)
    with pytest.raises(CorruptionError, match="seed"):
        c.apply(image, {"sigma": 0.1}, -1)
    with pytest.raises(CorruptionError, match="seed"):
        c.apply(image, {"sigma": 0.1}, 1.5)


# --------------------------------------------------------------------------- user corruptions


def test_user_corruption_from_a_python_path(tmp_path, monkeypatch, image):
    (tmp_path / "my_corruptions.py").write_text(
        textwrap.dedent(
            """
            import numpy as np

            def darken(image, params, rng):
                return image * (1.0 - params["amount"])
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    c = get_corruption(
        "darken",
        {"function": "my_corruptions:darken", "domain": {"amount": [0.0, 1.0]}, "reason": "test"},
    )
    assert c.source == "user" and c.param_names == ["amount"] and c.imagenet_c is None
    assert c.reason == "test"
    out = c.apply(image, {"amount": 0.5}, 0)
    np.testing.assert_array_equal(out, np.rint(image * 0.5).astype(np.uint8))
    np.testing.assert_array_equal(c.apply(image, c.identity, 0), image)
    with pytest.raises(CorruptionError, match="'darken'.*'amount' = 2.0 is outside"):
        c.apply(image, {"amount": 2.0}, 0)
    with pytest.raises(CorruptionError, match="needs `domain`"):
        get_corruption("darken", {"function": "my_corruptions:darken"})
    with pytest.raises(CorruptionError, match="cannot import module 'no_such_module'"):
        get_corruption("x", {"function": "no_such_module:f", "domain": {"a": [0, 1]}})
    with pytest.raises(CorruptionError, match="has no 'nothing'"):
        get_corruption("x", {"function": "my_corruptions:nothing", "domain": {"a": [0, 1]}})
    with pytest.raises(CorruptionError, match="package.module:function"):
        get_corruption("x", {"function": "my_corruptions.darken", "domain": {"a": [0, 1]}})


def test_user_corruption_returning_a_wrong_shape_is_reported(tmp_path, monkeypatch, image):
    (tmp_path / "bad_corruptions.py").write_text(
        "def crop(image, params, rng):\n    return image[1:]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    c = get_corruption("crop", {"function": "bad_corruptions:crop", "domain": {"a": [0, 1]}})
    with pytest.raises(CorruptionError, match="'crop' returned an image of shape"):
        c.apply(image, {"a": 0.5}, 0)


def test_register_corruption_decorator_and_direct_call(image):
    try:

        @register_corruption(
            "test_invert", params=[Param("mix", 0.0, (0.0, 1.0))], domain={"mix": [0, 1]}
        )
        def invert(img, params, rng):
            """Blend with the negative."""
            return (1 - params["mix"]) * img + params["mix"] * (255.0 - img)

        assert "test_invert" in list_corruptions()
        c = get_corruption("test_invert")
        assert c.description == "Blend with the negative."
        np.testing.assert_array_equal(c.apply(image, {"mix": 1.0}, 0), 255 - image)
        with pytest.raises(CorruptionError, match="already registered"):
            register_corruption("test_invert", params=[Param("mix", 0.0)], domain={"mix": [0, 1]})(
                invert
            )
        direct = register_corruption(
            "test_invert2", params=[Param("mix", 0.0)], domain={"mix": [0, 1]}, function=invert
        )
        assert direct.name == "test_invert2"
    finally:
        registry._REGISTRY.pop("test_invert", None)
        registry._REGISTRY.pop("test_invert2", None)


# --------------------------------------------------------------------------- every corruption


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_apply_shape_determinism_and_identity(name, image):
    c = get_corruption(name)
    params = mid_params(c)
    state, py_state = np.random.get_state(), random.getstate()  # noqa: NPY002 - checked unchanged
    out = c.apply(image, params, 1234)
    assert out.dtype == np.uint8 and out.shape == image.shape
    np.testing.assert_array_equal(out, c.apply(image.copy(), params, 1234))
    assert not np.array_equal(out, image), "a mid-domain corruption should change the image"
    if name in RANDOM:
        assert not np.array_equal(out, c.apply(image, params, 1235))
    else:
        np.testing.assert_array_equal(out, c.apply(image, params, 1235))
    if name not in NOT_IDENTITY:
        np.testing.assert_array_equal(c.apply(image, c.identity, 5), image)
    # No global random state is read or changed.
    new_state = np.random.get_state()  # noqa: NPY002
    assert all(np.array_equal(a, b) for a, b in zip(state, new_state, strict=True))
    assert random.getstate() == py_state


def _digest(names, img):
    out = {}
    for name in names:
        c = get_corruption(name)
        params = mid_params(c)
        out[name] = hashlib.sha256(c.apply(img, params, 99).tobytes()).hexdigest()
    return out


def test_same_pixels_in_another_process(image):
    names = sorted(PAPER_14)
    code = textwrap.dedent(
        f"""
        import json, sys
        import numpy as np
        sys.path.insert(0, {str(__import__("pathlib").Path(__file__).parent)!r})
        from test_corruptions import _digest
        img = np.frombuffer(bytes.fromhex(sys.stdin.read()), dtype=np.uint8).reshape(64, 64, 3)
        print(json.dumps(_digest({names!r}, img)))
        """
    )
    # A different hash seed makes any accidental dependence on set/dict order show.
    res = subprocess.run(
        [sys.executable, "-c", code],
        input=image.tobytes().hex(),
        capture_output=True,
        text=True,
        check=True,
        env={**__import__("os").environ, "PYTHONHASHSEED": "123"},
    )
    assert json.loads(res.stdout.strip().splitlines()[-1]) == _digest(names, image)


def test_frost_images_ship_with_imagecorruptions_and_load_offline():
    for index in range(len(icx.FROST_FILES)):
        frost = icx.frost_image(index)
        assert frost.dtype == np.uint8 and frost.ndim == 3 and min(frost.shape[:2]) > 224


# --------------------------------------------------------------------------- fidelity


@pytest.mark.parametrize("name", ["gaussian_blur", "defocus_blur", "brightness"])
def test_deterministic_imagenet_c_severities_match_imagecorruptions(name, image224):
    import imagecorruptions.corruptions as ic

    c = get_corruption(name)
    for severity, params in enumerate(c.imagenet_c, start=1):
        ref = getattr(ic, name)(Image.fromarray(image224), severity)
        out = c.apply(image224, params, 0).astype(int)
        rounded = np.clip(np.rint(ref), 0, 255)
        differ = (out != rounded).mean()
        assert np.abs(out - rounded).max() <= 1
        if name == "brightness":
            # Closed-form HSV: equal up to float rounding, which decides exact .5 ties
            # (delta * 255 is a half-integer for 0.1, 0.3, 0.5).
            assert differ < 0.1 and np.abs(out - rounded).mean() < 0.05
        elif name == "gaussian_blur":
            assert differ < 1e-3  # float32 filtering: only exact ties can differ
        else:
            assert differ == 0
        # imagecorruptions truncates to uint8 where we round: at most one grey level apart.
        assert np.abs(out - np.uint8(ref).astype(int)).max() <= 1


def test_motion_blur_matches_imagecorruptions_for_the_same_angle(image224):
    import imagecorruptions.corruptions as ic

    for params in get_corruption("motion_blur").imagenet_c:
        for angle in (-44.5, -3.0, 0.0, 17.25, 45.0):
            ref = ic._motion_blur(image224, params["radius"], params["sigma"], angle)
            out = icx.motion_blur_at(image224, params["radius"], params["sigma"], angle)
            np.testing.assert_allclose(out, ref, atol=1e-3)


def test_frost_matches_imagecorruptions_for_the_same_draws(image224, global_numpy_state):
    import imagecorruptions.corruptions as ic

    for severity, params in enumerate(get_corruption("frost").imagenet_c, start=1):
        np.random.seed(severity)  # noqa: NPY002 - drives imagecorruptions (restored by fixture)
        ref = ic.frost(Image.fromarray(image224), severity)
        draws = np.random.RandomState(severity)
        index = draws.randint(6)
        layer = icx._frost_rescaled(index, 224, 224)
        top, left = draws.randint(0, layer.shape[0] - 224), draws.randint(0, layer.shape[1] - 224)
        out = icx.frost_at(
            image224, params["image_weight"], params["frost_weight"], index, top, left
        )
        np.testing.assert_allclose(out, ref, atol=1e-9)


def test_glass_blur_moves_match_imagecorruptions_for_the_same_offsets():
    import imagecorruptions.corruptions as ic

    for severity, (sigma, delta, iters) in enumerate(
        [(0.7, 1, 2), (0.9, 2, 1), (1, 2, 3), (1.1, 3, 2), (1.5, 4, 2)], start=1
    ):
        x = np.random.default_rng(severity).integers(0, 256, (40, 40, 3)).astype(np.uint8)
        ref = ic._shuffle_pixels_njit_glass_blur(40, 40, x.copy(), (sigma, delta, iters), severity)
        # numba's seeded randint draws what numpy's legacy RandomState draws, in loop order.
        draws = np.random.RandomState(severity)
        n = 40 - 2 * delta
        offsets = np.array(
            [
                [[draws.randint(-delta, delta, size=(2,)) for _ in range(n)] for _ in range(n)]
                for _ in range(iters)
            ],
            dtype=np.int64,
        )
        out = icx._glass_moves()(x.copy(), offsets, np.ones(offsets.shape[:3], bool), delta)
        np.testing.assert_array_equal(out, ref)


def test_noise_statistics_follow_imagecorruptions():
    grey = np.full((128, 128, 3), 128, dtype=np.uint8)
    out = get_corruption("gaussian_noise").apply(grey, {"sigma": 0.08}, 3).astype(float) / 255
    assert abs(out.std() - 0.08) < 0.004 and abs(out.mean() - 128 / 255) < 0.003
    photons = 12.0
    out = get_corruption("shot_noise").apply(grey, {"photons": photons}, 3).astype(float) / 255
    # Poisson(x c)/c has variance x/c (here little is clipped).
    assert abs(out.var() - (128 / 255) / photons) < 0.004
    out = get_corruption("impulse_noise").apply(grey, {"amount": 0.2}, 3)
    changed = out != 128
    assert abs(changed.mean() - 0.2) < 0.01
    assert set(np.unique(out[changed])) == {0, 255}


# --------------------------------------------------------------------------- continuous internals


def test_defocus_kernel_interpolates_between_integer_radii():
    k3, k4 = icx.defocus_kernel(3, 0.5), icx.defocus_kernel(4, 0.5)
    from imagecorruptions.corruptions import disk

    np.testing.assert_array_equal(k3, disk(3, 0.5))
    np.testing.assert_allclose(icx.defocus_kernel(3.25, 0.5), 0.75 * k3 + 0.25 * k4, rtol=1e-6)
    # Across imagecorruptions' switch of grid size at radius 8 -> 9.
    k8, k9 = icx.defocus_kernel(8, 0.5), icx.defocus_kernel(9, 0.5)
    mid = icx.defocus_kernel(8.5, 0.5)
    assert mid.shape == k9.shape == (19, 19) and k8.shape == (17, 17)
    np.testing.assert_allclose(mid, 0.5 * np.pad(k8, 1) + 0.5 * k9, rtol=1e-5, atol=1e-9)


def test_motion_kernel_generalises_the_tap_count():
    from imagecorruptions.corruptions import getMotionBlurKernel

    np.testing.assert_allclose(icx.motion_kernel(10, 3), getMotionBlurKernel(21, 3))
    half = icx.motion_kernel(10.25, 30)  # length 21.5: a 22nd tap at half weight
    full = icx.motion_kernel(10.5, 30)
    assert len(half) == 22 and len(full) == 22
    ratio = (half[-1] / half[-2]) / (full[-1] / full[-2])
    assert ratio == pytest.approx(0.5)
    np.testing.assert_array_equal(icx.motion_kernel(5, 0), np.eye(1, 11)[0])


def test_glass_blur_fractional_iterations_and_delta_grow_the_change(image224):
    c = get_corruption("glass_blur")
    diffs = []
    for iterations in (0.0, 0.25, 0.5, 1.0):
        out = c.apply(image224, {"sigma": 0.0, "max_delta": 2.0, "iterations": iterations}, 4)
        diffs.append((out != image224).any(axis=2).mean())
    assert diffs[0] == 0 and diffs[0] < diffs[1] < diffs[2] < diffs[3]
    moved = []
    for delta in (0.0, 0.25, 0.5, 1.0, 1.5, 2.0):
        out = c.apply(image224, {"sigma": 0.0, "max_delta": delta, "iterations": 1.0}, 4)
        moved.append(np.abs(out.astype(int) - image224).mean())
    assert moved[0] == 0 and all(a < b for a, b in zip(moved[1:], moved[2:], strict=False))


def _toolbox_glass_loop(x, max_delta, draws):
    """The pixel loop of the VCR toolbox's glass blur (``transformations.py``, one iteration),
    verbatim but for the random source: ``draws.randint`` in its loop order."""
    for h in range(32 - max_delta, max_delta, -1):
        for w in range(32 - max_delta, max_delta, -1):
            dx, dy = draws.randint(-max_delta, max_delta, size=(2,))
            h_prime, w_prime = h + dy, w + dx
            # swap
            x[h, w], x[h_prime, w_prime] = x[h_prime, w_prime], x[h, w]
    return x


@pytest.mark.parametrize("delta", [1, 4, 9])
def test_glass_blur_toolbox_moves_are_the_toolboxs_loop_on_the_corner(delta, image):
    ref = _toolbox_glass_loop(image.copy(), delta, np.random.RandomState(delta))
    draws = np.random.RandomState(delta)
    n = 32 - 2 * delta
    offsets = np.array(
        [[[draws.randint(-delta, delta, size=(2,)) for _ in range(n)] for _ in range(n)]],
        dtype=np.int64,
    )
    out = image.copy()
    icx._glass_moves()(out[:32, :32], offsets, np.ones(offsets.shape[:3], bool), delta)
    np.testing.assert_array_equal(out, ref)
    assert not np.array_equal(out[:32, :32], image[:32, :32])
    np.testing.assert_array_equal(out[32:], image[32:])
    np.testing.assert_array_equal(out[:, 32:], image[:, 32:])


def test_glass_blur_toolbox_is_two_gaussian_blurs_outside_its_corner(image224):
    from vcrbench.vif import delta_v

    toolbox, glass = get_corruption("glass_blur_toolbox"), get_corruption("glass_blur")
    unmoved = toolbox.apply(image224, {"sigma": 0.0, "max_delta": 9.0}, 3)
    changed = (unmoved != image224).any(axis=2)
    assert changed.any() and not changed[32:].any() and not changed[:, 32:].any()
    sigma = 2.0
    out = toolbox.apply(image224, {"sigma": sigma, "max_delta": 5.0}, 3)
    blurred = glass.apply(image224, {"sigma": sigma, "max_delta": 0.0, "iterations": 0.0}, 3)
    reach = 32 + int(4 * sigma) + 1  # the second blur spreads the corner's moves this far
    np.testing.assert_array_equal(out[reach:], blurred[reach:])
    np.testing.assert_array_equal(out[:, reach:], blurred[:, reach:])
    # why it is its own corruption: its mildest draws barely change an ImageNet-sized image,
    # where ImageNet-C's glass blur moves every pixel (the paper's Table 2 coverage, .949)
    mild = {"sigma": 0.05, "max_delta": 9.0}
    dv_toolbox = delta_v(image224, toolbox.apply(image224, mild, 1))[1]
    dv_glass = delta_v(image224, glass.apply(image224, {**mild, "iterations": 1.0}, 1))[1]
    assert dv_toolbox < 0.05 < 0.3 < dv_glass, (dv_toolbox, dv_glass)


@pytest.mark.parametrize("name", ["blur", "median_blur"])
def test_odd_kernel_sizes_interpolate(name, image224):
    import albumentations.augmentations.blur.functional as fblur

    op = fblur.box_blur if name == "blur" else fblur.median_blur
    c = get_corruption(name)
    np.testing.assert_array_equal(c.apply(image224, {"ksize": 5.0}, 0), op(image224, 5))
    mid = c.apply(image224, {"ksize": 6.0}, 0).astype(float)
    expected = np.rint(0.5 * op(image224, 5).astype(float) + 0.5 * op(image224, 7))
    np.testing.assert_array_equal(mid, expected)


def _line_ends(case: dict) -> dict[str, float]:
    """The parameters of ``motion_blur_line`` that give Albumentations 0.5.2's draws ``case``
    (the centre of each draw's interval of fractions)."""
    k, xs, ys, xe, ye = (case[key] for key in ("ksize", "xs", "ys", "xe", "ye"))
    if xs == xe:  # ye is the (ye - [ye > ys])-th of the k - 1 rows other than ys
        y1 = (ye - (ye > ys) + 0.5) / (k - 1)
    else:
        y1 = (ye + 0.5) / k
    return {
        "ksize": float(k),
        "x0": (k - 1 - xs + 0.5) / k,
        "y0": (k - 1 - ys + 0.5) / k,
        "x1": (xe + 0.5) / k,
        "y1": y1,
    }


@pytest.fixture(scope="module")
def motion_blur_052() -> list[dict]:
    """Kernels that Albumentations 0.5.2's ``MotionBlur(blur_limit=50)`` drew, with its draws."""
    path = __import__("pathlib").Path(__file__).parent / "data/albumentations_052_motion_blur.json"
    return json.loads(path.read_text())["cases"]


def test_motion_blur_line_kernel_is_albumentations_052s(motion_blur_052):
    from vcrbench.corruptions.albu import line_kernel

    assert any(case["xs"] == case["xe"] for case in motion_blur_052)  # the distinct-rows rule
    for case in motion_blur_052:
        p = _line_ends(case)
        kernel = line_kernel(case["ksize"], *(p[k] for k in ("x0", "y0", "x1", "y1")))
        assert kernel.shape == (case["ksize"],) * 2 and kernel.dtype == np.float32
        assert np.argwhere(kernel > 0).tolist() == case["pixels"], case
        np.testing.assert_allclose(kernel[kernel > 0], case["value"], rtol=1e-6)


def test_motion_blur_line_is_albumentations_motion_blur_at_odd_sizes(motion_blur_052, image224):
    import albumentations as A

    from vcrbench.corruptions.albu import line_kernel

    c = get_corruption("motion_blur_line", {"domain_set": "paper"})
    apply = A.MotionBlur(blur_limit=(3, 49), p=1.0).apply  # 2.0.8: OpenCV filter2D
    for case in motion_blur_052[:3]:
        p = _line_ends(case)
        kernel = np.zeros((case["ksize"],) * 2, dtype=np.float32)
        kernel[tuple(np.array(case["pixels"]).T)] = case["value"]
        np.testing.assert_array_equal(c.apply(image224, p, 0), apply(image224, kernel=kernel))
    # Between odd sizes: the two results interpolated, the same ends at both sizes.
    ends = {"x0": 0.9, "y0": 0.2, "x1": 0.7, "y1": 0.6}
    at = {k: apply(image224, kernel=line_kernel(k, *ends.values())).astype(float) for k in (5, 7)}
    np.testing.assert_array_equal(
        c.apply(image224, {"ksize": 6.5, **ends}, 0), np.rint(0.25 * at[5] + 0.75 * at[7])
    )


def test_motion_blur_line_is_reproducible_from_its_recorded_parameters(clean_set):
    from vcrbench.testsets import sampling

    c = get_corruption("motion_blur_line", {"domain_set": "paper"})
    m = sampling.make_manifest(c, clean_set, 12, 12, seed=3, mode="parameter-uniform")
    assert set(c.param_columns) <= set(m.columns)
    assert m["param.ksize"].between(3, 49).all() and m["param.x0"].between(0, 1).all()
    ids = m["image_id"].tolist()
    images = clean_set.images(ids)
    row = m.iloc[0]
    params = {
        name: float(row[col]) for name, col in zip(c.param_names, c.param_columns, strict=True)
    }
    first = c.apply(images[0], params, int(row["seed"]))
    # The same pixels from the recorded row alone, whatever the seed (no hidden draw).
    np.testing.assert_array_equal(first, c.apply(images[0].copy(), params, int(row["seed"]) + 1))
    again = sampling.make_manifest(c, clean_set, 12, 12, seed=3, mode="parameter-uniform")
    assert again.equals(m)


def test_motion_blur_line_dv_grows_with_the_kernel(image224):
    from vcrbench.settings import VifSettings
    from vcrbench.vif import delta_v

    c = get_corruption("motion_blur_line")
    diagonal = {"x0": 1.0, "y0": 1.0, "x1": 1.0, "y1": 1.0}
    sizes = [3.0, 7.0, 15.0, 31.0, 49.0]
    out = np.stack([c.apply(image224, {"ksize": k, **diagonal}, 0) for k in sizes])
    dv = delta_v(np.repeat(image224[None], len(sizes), 0), out, VifSettings(variant="kumar"))[1]
    assert np.all(np.diff(dv) > 0) and dv[0] < 0.4 and dv[-1] > 0.8, dv


def test_albumentations_colour_corruptions_use_its_functions(image224):
    import albumentations.augmentations.pixel.functional as fp

    c = get_corruption("hue_saturation_value")
    p = {"hue_shift": 20.0, "sat_shift": -30.0, "val_shift": 15.0}
    np.testing.assert_array_equal(
        c.apply(image224, p, 0), fp.shift_hsv(image224, 20.0, -30.0, 15.0)
    )
    c = get_corruption("color_jitter")
    p = {"brightness": 1.2, "contrast": 0.8, "saturation": 1.0, "hue": 0.0}
    out = c.apply(image224, p, 0)
    # Brightness and contrast do not commute; the order comes from the seed.
    orders = {c.apply(image224, p, s).tobytes() for s in range(8)}
    assert len(orders) == 2 and out.tobytes() in orders


def test_uniform_noise_is_geirhos_definition(image224):
    from skimage.color import rgb2gray

    c = get_corruption("uniform_noise")
    assert c.param_names == ["width"]
    base = 0.3 * rgb2gray(image224 / 255.0) + 0.35
    out0 = c.apply(image224, {"width": 0.0}, 0)
    assert (out0 == out0[..., :1]).all()  # greyscale
    np.testing.assert_array_equal(out0[..., 0], np.rint(base * 255).astype(np.uint8))
    for width in (0.1, 0.35, 0.6, 0.9):  # widths of the human experiment
        out = c.apply(image224, {"width": width}, 1)[..., 0] / 255.0
        noise = out - base
        inside = (out > 1 / 255) & (out < 254 / 255)
        assert np.abs(noise[inside]).max() <= width + 0.5 / 255 + 1e-9
        if width <= 0.35:
            assert np.abs(noise).max() > 0.95 * width
        else:  # clipped at 0 and 1, as in their experiment
            assert ((out == 0) | (out == 1)).mean() > 0.05
    # Geirhos et al.: no clipping up to w = 0.35 (contrast 30% leaves room for it).
    out = c.apply(image224, {"width": 0.35}, 2)[..., 0].astype(int)
    assert (out > 0).all() and (out < 255).all()


def test_path_gives_parameter_uniform_marginals():
    from scipy.stats import kstest

    c = get_corruption("hue_saturation_value")
    gen = np.random.default_rng(0)
    n = 4000
    for name in c.param_names:
        t = gen.random(n)
        side = {p: gen.random(n) for p in c.param_names}
        values = c.path(t, side)[name]
        lo, hi = c.domain[name]
        assert kstest(values, "uniform", args=(lo, hi - lo)).pvalue > 1e-3
    ident = c.path(np.zeros(3), None)
    assert all(np.all(v == c.identity[k]) for k, v in ident.items())
