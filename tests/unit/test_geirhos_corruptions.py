"""Geirhos et al. (2018)'s manipulations and ImageNet-C's contrast: the facts the papers state.

Geirhos et al., "Generalisation in humans and deep neural networks", NeurIPS 2018 (supplement,
"Image preprocessing and distortions"); Hendrycks & Dietterich, ICLR 2019 (imagecorruptions'
``contrast``). The modules are imported here explicitly: that registers their corruptions.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from imagecorruptions import corrupt
from PIL import Image
from scipy.ndimage import gaussian_filter
from skimage import data
from skimage.color import rgb2gray

import vcrbench.corruptions.geirhos2018 as g18
import vcrbench.corruptions.imagenet_c_contrast as icc
from vcrbench.corruptions import CorruptionError, calibrated_domains, get_corruption

NEW = {
    "geirhos_contrast": ("contrast", 1.0),
    "geirhos_highpass": ("inv_sigma", 0.0),
    "geirhos_phase_noise": ("width", 0.0),
    "geirhos_power_equalisation": ("amount", 0.0),
    "geirhos_greyscale": ("amount", 0.0),
    "geirhos_false_colour": ("amount", 0.0),
    "contrast": ("c", 1.0),
}
#: Identity parameters that leave the colour image itself unchanged; the others give the
#: greyscale image (Geirhos' undistorted condition).
COLOUR_IDENTITY = {"geirhos_greyscale", "geirhos_false_colour", "contrast"}
RANDOM = {"geirhos_phase_noise"}


@pytest.fixture(scope="module")
def astronaut() -> np.ndarray:
    return data.astronaut()


@pytest.fixture(scope="module")
def small() -> np.ndarray:
    """A 96x128 colour image (scikit-image's chelsea, downsampled; odd-free, non-square)."""
    return np.asarray(Image.fromarray(data.chelsea()).resize((128, 96), Image.BILINEAR))


def grey255(image: np.ndarray) -> np.ndarray:
    """The rgb2gray image on 0-255 floats, HxW."""
    return rgb2gray(image / 255.0) * 255.0


def middle(name: str) -> dict[str, float]:
    c = get_corruption(name)
    (p,) = c.params
    lo, hi = c.domain[p.name]
    return {p.name: math.sqrt(lo * hi) if p.scale == "log" else (lo + hi) / 2}


# --------------------------------------------------------------------------- registry


def test_registered_with_names_parameters_identities_and_domains():
    for name, (param, identity) in NEW.items():
        c = get_corruption(name)
        assert c.param_names == [param]
        assert c.params[0].identity == identity
        assert c.source == ("imagenet-c" if name == "contrast" else "geirhos2018")
        contrast = name in ("contrast", "geirhos_contrast")
        assert c.similarity_class == ("contrast" if contrast else None)
        assert c.domain[param] == tuple(calibrated_domains()[name]["domain"][param])
        assert c.reason and c.calibration["dv_severe"]["median"] > 0
    assert "geirhos_rotation" not in calibrated_domains()
    with pytest.raises(CorruptionError, match="unknown corruption 'geirhos_rotation'"):
        get_corruption("geirhos_rotation")


def test_domains_contain_the_papers_conditions():
    def inside(name, key, values):
        lo, hi = get_corruption(name).domain[key]
        assert all(lo <= v <= hi for v in values), (name, values)

    inside("geirhos_contrast", "contrast", g18.CONTRASTS)
    inside("geirhos_highpass", "inv_sigma", [1 / s for s in g18.HIGHPASS_SIGMAS])
    inside("geirhos_phase_noise", "width", g18.PHASE_NOISE_WIDTHS)
    inside("contrast", "c", icc.SEVERITIES)
    assert [s["c"] for s in get_corruption("contrast").imagenet_c] == list(icc.SEVERITIES)


@pytest.mark.parametrize("name", sorted(NEW))
def test_outside_the_domain_raises_naming_corruption_and_parameter(name, small):
    c = get_corruption(name)
    (p,) = c.params
    lo, hi = c.domain[p.name]
    for value in (lo - 0.1 * (hi - lo) - 1e-3, hi + 0.1 * (hi - lo) + 1e-3, math.nan):
        with pytest.raises(CorruptionError, match=f"'{name}'.*'{p.name}'"):
            c.apply(small, {p.name: value}, seed=0)
    with pytest.raises(CorruptionError, match=f"'{name}'.*'{p.name}'.*valid range"):
        c.apply(small, {p.name: p.limits[1] + 1.0}, seed=0, within="limits")


# --------------------------------------------------------------------------- identity, determinism


@pytest.mark.parametrize("name", sorted(NEW))
def test_identity(name, small):
    c = get_corruption(name)
    out = c.apply(small, c.identity, seed=3)
    if name in COLOUR_IDENTITY:
        np.testing.assert_array_equal(out, small)
    else:
        expected = np.clip(np.rint(grey255(small)), 0, 255)
        # Fourier round trips may move an exact .5 tie by one grey level.
        assert np.abs(out[..., 0].astype(int) - expected).max() <= 1
        assert np.mean(out[..., 0] != expected) < 1e-3
        assert (out == out[..., :1]).all()


@pytest.mark.parametrize("name", sorted(NEW))
def test_deterministic_and_no_global_random_state(name, small):
    c = get_corruption(name)
    params = middle(name)
    before = (np.random.get_state()[1].copy(), random.getstate())  # noqa: NPY002 - checked unchanged
    a = c.apply(small, params, seed=11)
    b = c.apply(small, params, seed=11)
    other = c.apply(small, params, seed=12)
    after = (np.random.get_state()[1], random.getstate())  # noqa: NPY002
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(before[0], after[0])
    assert before[1] == after[1]
    assert a.shape == small.shape and a.dtype == np.uint8
    if name in RANDOM:
        assert (a != other).mean() > 0.5
    else:
        np.testing.assert_array_equal(a, other)


# --------------------------------------------------------------------------- uniform noise


def expected_clipped_share(image: np.ndarray, width: float) -> tuple[float, float]:
    """Expected share of clipped pixels for U[−w, w) noise on the 30%-contrast grey image.

    A pixel of value v is clipped with probability P(v + n < 0) + P(v + n > 1) =
    max(0, w − v)/2w + max(0, v + w − 1)/2w. With v in [0.35, 0.65] (30 % contrast) this is 0
    for w ≤ 0.35, exactly 4/9 for w = 0.9 (any v in [0.1, 0.9]), and between 1/6 and 5/24 for
    w = 0.6 depending on how many pixels lie beyond 0.4 / 0.6. Returns (share, standard error).
    """
    v = 0.3 * rgb2gray(image / 255.0) + 0.35
    p = (np.clip(width - v, 0, None) + np.clip(v + width - 1, 0, None)) / (2 * width)
    return float(p.mean()), float(np.sqrt((p * (1 - p)).sum()) / p.size)


@pytest.mark.parametrize("image_name", ["astronaut", "chelsea", "coffee"])
def test_uniform_noise_clipping_matches_the_paper(image_name):
    """Paper: none clipped at w ≤ 0.35, 17.2 % at w = 0.6, 44.4 % at w = 0.9 (their images)."""
    image = getattr(data, image_name)()
    f = get_corruption("uniform_noise").function
    rng = np.random.default_rng(0)
    for width in (0.03, 0.1, 0.2, 0.35):
        out = f(image, {"width": width}, rng)[..., 0]
        assert not ((out == 0) | (out == 255)).any()
    for width in (0.6, 0.9):
        out = f(image, {"width": width}, rng)[..., 0]
        share = float(((out == 0) | (out == 255)).mean())
        expected, se = expected_clipped_share(image, width)
        assert abs(share - expected) < 5 * se
        if width == 0.9:
            assert expected == pytest.approx(4 / 9, abs=1e-12)
            assert share == pytest.approx(0.444, abs=0.005)
        else:
            assert 1 / 6 <= expected <= 5 / 24  # the paper's 17.2 % lies in this range
            assert 1 / 6 - 5 * se <= share <= 5 / 24 + 5 * se


# --------------------------------------------------------------------------- contrast


def test_geirhos_contrast(small):
    f = get_corruption("geirhos_contrast").function
    grey = grey255(small) / 255.0
    full = f(small, {"contrast": 1.0}, None)
    np.testing.assert_allclose(full, np.repeat(grey[..., None] * 255, 3, axis=2), atol=1e-9)
    for c in g18.CONTRASTS:
        out = f(small, {"contrast": c}, None)[..., 0] / 255.0
        np.testing.assert_allclose(out, c * grey + (1 - c) / 2, atol=1e-12)
        assert np.ptp(out) == pytest.approx(c * np.ptp(grey))


def test_imagenet_c_contrast_equals_imagecorruptions(astronaut, small):
    c = get_corruption("contrast")
    for image in (astronaut, small):
        for severity, params in enumerate(c.imagenet_c, start=1):
            reference = corrupt(image, corruption_name="contrast", severity=severity)
            ours = c.function(image, params, None)
            # imagecorruptions truncates (np.uint8); the registry rounds.
            np.testing.assert_array_equal(np.uint8(ours), reference)
            applied = c.apply(image, params, seed=0, within="limits")
            assert np.abs(applied.astype(int) - reference).max() <= 1
    out = c.function(small, {"c": 0.2}, None) / 255.0
    x = small / 255.0
    np.testing.assert_allclose(out.mean(axis=(0, 1)), x.mean(axis=(0, 1)), atol=1e-12)


# --------------------------------------------------------------------------- high-pass


@pytest.mark.parametrize("sigma", [0.4, 1.0, 3.0, 15.0, 40.0])
def test_lowpass_equals_scipy_constant_padding(sigma):
    x = np.random.default_rng(1).random((37, 52))
    np.testing.assert_allclose(
        g18.lowpass_constant(x, sigma),
        gaussian_filter(x, sigma, mode="constant", cval=0.4423, truncate=4.0),
        atol=1e-12,
    )


def test_highpass_mean_restored_to_0_4423(astronaut):
    f = get_corruption("geirhos_highpass").function
    grey = grey255(astronaut) / 255.0
    for sigma in g18.HIGHPASS_SIGMAS[1:]:
        out = f(astronaut, {"inv_sigma": 1 / sigma}, None)[..., 0] / 255.0
        clipped = ((out == 0) | (out == 1)).mean()
        # The paper: < 0.001 % of their pixels; astronaut's black corner gives 0.011 % at σ = 3.
        assert clipped < 5e-4
        assert out.mean() == pytest.approx(g18.MEAN_GREY, abs=1e-9 if clipped == 0 else 1e-4)
        high = grey - gaussian_filter(grey, sigma, mode="constant", cval=0.4423, truncate=4.0)
        np.testing.assert_allclose(out, np.clip(high - high.mean() + 0.4423, 0, 1), atol=1e-12)
    # σ = ∞ is the original greyscale image; very large σ tends to it with its mean moved.
    np.testing.assert_allclose(f(astronaut, {"inv_sigma": 0.0}, None)[..., 0] / 255, grey)
    far = f(astronaut, {"inv_sigma": 1e-9}, None)[..., 0] / 255.0
    np.testing.assert_allclose(far, np.clip(grey - grey.mean() + 0.4423, 0, 1), atol=1e-6)
    # Small σ: approaches a uniform grey of 0.4423.
    assert np.ptp(f(astronaut, {"inv_sigma": 2.5}, None)) < np.ptp(grey * 255) / 4


# --------------------------------------------------------------------------- phase noise


def test_phase_shifts_are_antisymmetric_per_frequency_pair():
    for shape in ((16, 16), (15, 20), (9, 7)):
        phi = g18.phase_shifts(shape, 90.0, np.random.default_rng(2))
        neg = phi[np.ix_((-np.arange(shape[0])) % shape[0], (-np.arange(shape[1])) % shape[1])]
        np.testing.assert_array_equal(phi, -neg)
        assert np.abs(phi).max() <= math.pi / 2
        assert phi[0, 0] == 0
        assert np.count_nonzero(phi) >= phi.size - 4  # only self-conjugate frequencies kept


def test_phase_noise_keeps_the_spectrum_hermitian_and_the_amplitudes(small):
    grey = grey255(small) / 255.0
    for width in g18.PHASE_NOISE_WIDTHS:
        spectrum = np.fft.fft2(grey) * np.exp(
            1j * g18.phase_shifts(grey.shape, width, np.random.default_rng(5))
        )
        mirrored = spectrum[np.ix_((-np.arange(96)) % 96, (-np.arange(128)) % 128)]
        np.testing.assert_allclose(spectrum, np.conj(mirrored), atol=1e-9)
        result = np.fft.ifft2(spectrum)
        assert np.abs(result.imag).max() < 1e-12
        np.testing.assert_allclose(np.abs(np.fft.fft2(result.real)), np.abs(np.fft.fft2(grey)))
    f = get_corruption("geirhos_phase_noise").function
    out = f(small, {"width": 90.0}, np.random.default_rng(5))[..., 0] / 255.0
    expected = np.fft.ifft2(
        np.fft.fft2(grey)
        * np.exp(1j * g18.phase_shifts(grey.shape, 90.0, np.random.default_rng(5)))
    ).real
    np.testing.assert_allclose(out, np.clip(expected, 0, 1), atol=1e-12)
    np.testing.assert_allclose(
        f(small, {"width": 0.0}, np.random.default_rng(0))[..., 0], grey * 255
    )


# --------------------------------------------------------------------------- power equalisation


def test_mean_amplitude_spectrum():
    for shape in ((224, 224), (96, 128), (51, 77)):
        a = g18.mean_amplitude_spectrum(shape)
        h, w = shape
        assert a[0, 0] == pytest.approx(0.4423 * h * w)
        np.testing.assert_array_equal(a, a[np.ix_((-np.arange(h)) % h, (-np.arange(w)) % w)])
        assert (a > 0).all()
    a = g18.mean_amplitude_spectrum((224, 224))
    f = np.hypot(np.fft.fftfreq(224)[:, None], np.fft.fftfreq(224)[None, :])
    for freq, amp in g18.MEAN_AMPLITUDE_SPECTRUM:
        near = np.abs(np.log(f[f > 0] / freq)) < 1e-3
        if near.any():
            np.testing.assert_allclose(a[f > 0][near] / 224, amp, rtol=5e-3)
    # Radially decreasing, about 1/f (slope between -0.9 and -1.6 in log-log below 0.35 c/px).
    slope = np.polyfit(*np.log(np.array(g18.MEAN_AMPLITUDE_SPECTRUM[:14])).T, 1)[0]
    assert -1.6 < slope < -0.9


def test_power_equalisation_gives_the_target_spectrum(astronaut, small):
    for image in (astronaut, small):
        grey = grey255(image) / 255.0
        target = g18.mean_amplitude_spectrum(grey.shape)
        equalised = g18.power_equalised(grey, 1.0)
        np.testing.assert_allclose(np.abs(np.fft.fft2(equalised)), target, rtol=1e-9, atol=1e-9)
        # Phases are the image's own.
        ratio = np.fft.fft2(equalised) / np.fft.fft2(grey)
        np.testing.assert_allclose(np.angle(ratio), 0, atol=1e-6)
        assert equalised.mean() == pytest.approx(0.4423)
        half = g18.power_equalised(grey, 0.5)
        np.testing.assert_allclose(
            np.abs(np.fft.fft2(half)), (np.abs(np.fft.fft2(grey)) + target) / 2, atol=1e-8
        )
    f = get_corruption("geirhos_power_equalisation").function
    out = f(astronaut, {"amount": 1.0}, None)[..., 0] / 255.0
    assert ((out == 0) | (out == 1)).mean() < 0.01
    np.testing.assert_allclose(
        out, np.clip(g18.power_equalised(grey255(astronaut) / 255, 1.0), 0, 1), atol=1e-12
    )


# --------------------------------------------------------------------------- colour


def test_greyscale(small):
    f = get_corruption("geirhos_greyscale").function
    grey = np.repeat(grey255(small)[..., None], 3, axis=2)
    np.testing.assert_allclose(f(small, {"amount": 1.0}, None), grey, atol=1e-9)
    np.testing.assert_allclose(f(small, {"amount": 0.0}, None), small)
    np.testing.assert_allclose(f(small, {"amount": 0.25}, None), 0.75 * small + 0.25 * grey)


def rotated_linear(dkl: np.ndarray, amount: float) -> np.ndarray:
    """Linear RGB after rotating DKL's chromatic plane by 180°·amount (before any clipping)."""
    cos, sin = math.cos(math.pi * amount), math.sin(math.pi * amount)
    new = dkl.copy()
    new[..., 1] = cos * dkl[..., 1] - sin * dkl[..., 2]
    new[..., 2] = sin * dkl[..., 1] + cos * dkl[..., 2]
    cones = new @ np.linalg.inv(g18.DKL_MATRIX).T + g18.WHITE_POINT
    return cones @ np.linalg.inv(g18.CONE_MATRIX).T


def test_false_colour_negates_the_chromatic_axes_at_equal_luminance(astronaut, small):
    """Paper: L−M and S−luminance multiplied by −1 in DKL, luminance unchanged."""
    f = get_corruption("geirhos_false_colour").function
    for image in (astronaut, small):
        dkl = g18.to_dkl(image)
        out = f(image, {"amount": 1.0}, None)
        # Where the result needed no clipping the definition holds exactly.
        inside = ((rotated_linear(dkl, 1.0) >= 0) & (rotated_linear(dkl, 1.0) <= 1)).all(-1)
        assert inside.mean() > 0.5
        new = g18.to_dkl(out)
        np.testing.assert_allclose(new[inside][:, 0], dkl[inside][:, 0], atol=1e-9)
        np.testing.assert_allclose(new[inside][:, 1:], -dkl[inside][:, 1:], atol=1e-9)
        # The opponent of the opponent is the original, up to rounding, where nothing clipped.
        twice = f(np.clip(np.rint(out), 0, 255).astype(np.uint8), {"amount": 1.0}, None)
        assert np.median(np.abs(twice[inside] - image[inside])) <= 0.5
        assert np.percentile(np.abs(twice[inside] - image[inside]), 99) <= 2
        # In between, a rotation of the chromatic plane: luminance and chromatic contrast kept.
        linear = rotated_linear(dkl, 0.5)
        inside = ((linear >= 0) & (linear <= 1)).all(-1)
        half = g18.to_dkl(f(image, {"amount": 0.5}, None))
        np.testing.assert_allclose(half[inside][:, 0], dkl[inside][:, 0], atol=1e-9)
        np.testing.assert_allclose(
            np.hypot(half[..., 1], half[..., 2])[inside],
            np.hypot(dkl[..., 1], dkl[..., 2])[inside],
            atol=1e-9,
        )
    # Grey stays grey (the white point is mid-grey; greys have no chromatic component).
    ramp = np.repeat(np.arange(256, dtype=np.uint8)[None, :, None], 3, axis=2)
    assert np.abs(f(ramp, {"amount": 1.0}, None) - ramp).max() <= 1.0


def test_monitor_curve_round_trip():
    levels = np.arange(256.0)
    lum = g18.monitor_luminance(levels)
    assert lum[0] == 0 and lum[-1] == 1 and (np.diff(lum) > 0).all()
    np.testing.assert_allclose(g18.inverse_monitor_luminance(lum), levels, atol=1e-9)


# --------------------------------------------------------------------------- rotation


def test_rotation_is_a_function_not_a_corruption(small):
    grey = grey255(small)
    r90 = g18.geirhos_rotation(small, {"angle": 90.0})
    assert r90.shape == (128, 96, 3)
    # The paper: transpose, then reverse the order (counter-clockwise).
    np.testing.assert_allclose(r90[..., 0], grey.T[::-1, :])
    np.testing.assert_allclose(
        g18.geirhos_rotation(small, {"angle": 180.0})[..., 0], grey[::-1, ::-1]
    )
    np.testing.assert_allclose(
        g18.geirhos_rotation(small, {"angle": 270.0})[..., 0], grey[::-1, :].T
    )
    np.testing.assert_allclose(g18.geirhos_rotation(small, {"angle": 0.0})[..., 0], grey)
    with pytest.raises(CorruptionError, match="'geirhos_rotation'.*'angle'"):
        g18.geirhos_rotation(small, {"angle": 45.0})
