"""vcrbench.vif: Δv from wavelet VIF, against the straightforward per-image reference
(``vif_reference.py``, pyrtools' pyramid) and the paper-port values of docs/method.md §1."""

from __future__ import annotations

import numpy as np
import pytest
from imagecorruptions import corrupt
from scipy.ndimage import gaussian_filter
from skimage import data

from vcrbench import vif as V
from vcrbench.datasets.loading import resize_center_crop

from .vif_reference import vif_reference

# ImageNet-C gaussian_noise severities (imagecorruptions' ``gaussian_noise`` draws from numpy's
# global generator; the test draws the same noise from its own seeded Generator).
NOISE_SIGMA = (0.08, 0.12, 0.18, 0.26, 0.38)


@pytest.fixture(scope="module")
def astronaut() -> np.ndarray:
    """The 224x224 uint8 astronaut of docs/method.md §1 (Resize 256 + CenterCrop 224)."""
    return resize_center_crop(data.astronaut(), 256, 224)


@pytest.fixture(scope="module")
def images(astronaut) -> list[np.ndarray]:
    return [astronaut] + [
        resize_center_crop(getattr(data, n)(), 256, 224) for n in ("chelsea", "coffee")
    ]


def gaussian_noise(img: np.ndarray, sigma: float, seed: int) -> np.ndarray:
    """imagecorruptions' gaussian_noise (same formula, same uint8 truncation), seeded."""
    rng = np.random.default_rng(seed)
    return np.uint8(np.clip(img / 255.0 + rng.normal(size=img.shape, scale=sigma), 0, 1) * 255)


def dv(v):
    return np.clip(1.0 - np.asarray(v), 0.0, 1.0)


# --------------------------------------------------------------------------- luma


def test_luma_is_bt601_in_float_on_the_0_255_scale():
    rgb = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [1, 2, 3], [255, 255, 255]]], np.uint8)
    y = V.luma(rgb)
    assert y.dtype == np.float64 and y.shape == (1, 5)
    np.testing.assert_allclose(y[0], [76.245, 149.685, 29.07, 1.815, 255.0], rtol=0, atol=1e-12)


def test_luma_equals_the_float_formula_exactly():
    rgb = np.random.default_rng(0).integers(0, 256, (2, 31, 17, 3), dtype=np.uint8)
    r, g, b = (rgb[..., i].astype(np.float64) for i in range(3))
    np.testing.assert_array_equal(V.luma(rgb), 0.299 * r + 0.587 * g + 0.114 * b)
    np.testing.assert_array_equal(V.luma(rgb[:, ::2]), V.luma(np.ascontiguousarray(rgb[:, ::2])))


def test_luma_rejects_non_uint8_and_non_rgb():
    with pytest.raises(TypeError, match="uint8"):
        V.luma(np.zeros((4, 4, 3), np.float32))
    with pytest.raises(ValueError, match=r"\(\.\.\., H, W, 3\)"):
        V.luma(np.zeros((4, 4, 4), np.uint8))


# --------------------------------------------------------------------------- basic properties


def test_identical_pairs_give_zero_dv(images):
    batch = np.stack(images + [np.random.default_rng(0).integers(0, 256, (224, 224, 3), np.uint8)])
    vif, d = V.delta_v(batch, batch.copy())
    assert np.all(np.abs(vif - 1) < 1e-9)
    assert np.all(d <= 1e-9)
    for variant in V.VARIANTS:
        assert np.all(np.abs(V.vif(V.luma(batch), V.luma(batch), variant) - 1) < 1e-9)


def test_pure_degradations_do_not_exceed_one(images):
    rng = np.random.default_rng(1)
    refs, dists = [], []
    for img in images:
        x = V.luma(img)
        for sigma in (0.5, 1, 2, 4):
            refs.append(x)
            dists.append(gaussian_filter(x, sigma, mode="reflect"))
        for noise in (1, 5, 20):
            refs.append(x)
            dists.append(x + rng.normal(size=x.shape) * noise)  # unclipped: a pure degradation
    for variant in V.VARIANTS:
        vif = V.vif(np.stack(refs), np.stack(dists), variant)
        assert np.all(vif <= 1 + 1e-9), vif
        assert np.all(vif > 0)


def test_vif_is_not_symmetric(astronaut):
    x = V.luma(astronaut)
    y = gaussian_filter(x, 2)
    assert abs(V.vif(x, y) - V.vif(y, x)) > 0.05


def test_batch_results_equal_single_results(astronaut):
    x = V.luma(astronaut)
    ys = np.stack([gaussian_filter(x, s) for s in (0.7, 1.5, 3)] + [255 - x, x * 0.5])
    xs = np.broadcast_to(x, ys.shape).copy()
    batch = V.vif(xs, ys)
    single = np.array([V.vif(a, b) for a, b in zip(xs, ys, strict=True)])
    np.testing.assert_array_equal(batch, single)
    np.testing.assert_array_equal(V.vif(xs, ys, batch_size=2), batch)
    assert isinstance(V.vif(xs[0], ys[0]), float)
    vif, d = V.delta_v(astronaut, np.uint8(np.clip(astronaut * 0.9, 0, 255)))
    assert isinstance(vif, float) and isinstance(d, float) and d == max(0.0, 1.0 - vif)


def test_contrast_stretch_gives_vif_above_one_and_zero_dv(astronaut):
    x = 0.5 * V.luma(astronaut) + 64  # room to stretch without clipping
    y = (x - 128) * 1.5 + 128
    vif = V.vif(x, y)
    assert vif > 1.05
    assert vif == pytest.approx(vif_reference(x, y), abs=1e-9)
    clean = np.uint8(np.round(np.stack([x] * 3, -1)))
    stretched = np.uint8(np.round(np.stack([y] * 3, -1)))
    v, d = V.delta_v(clean, stretched)
    assert v > 1 and d == 0.0


def test_flat_reference_gives_vif_one(astronaut):
    flat = np.full((224, 224), 77.0)
    x = V.luma(astronaut)
    for dist in (x, np.full_like(x, 30.0), flat):
        assert V.vif(flat, dist) == 1.0
        assert V.vif(flat, dist, "vifvec") == 1.0  # MATLAB gives 0 / 0 = NaN: defined as 1
        assert vif_reference(flat, dist) == 1.0  # the port's guard: 1e-4 / 1e-4
    flat_rgb = np.full((224, 224, 3), 77, np.uint8)
    assert V.delta_v(flat_rgb, astronaut) == (1.0, 0.0)


# --------------------------------------------------------------------------- the reference


def _reference_pairs(images):
    """Varied pairs: several images, corruptions and severities, and extreme cases."""
    rng = np.random.default_rng(2)
    pairs = []
    for i, img in enumerate(images):
        x = V.luma(img)
        for name, sev in (
            ("gaussian_blur", 2),
            ("brightness", 4),
            ("jpeg_compression", 3),
            ("motion_blur", 5),
            ("contrast", 5),
            ("pixelate", 1),
        ):
            if (i + sev) % 2 == 0 or name in ("gaussian_blur", "brightness"):
                pairs.append((x, V.luma(corrupt(img, corruption_name=name, severity=sev))))
        pairs.append((x, V.luma(gaussian_noise(img, NOISE_SIGMA[i], seed=i))))
    x = V.luma(images[0])
    half = x.copy()
    half[:, :112] = 128.0
    pairs += [
        (x, 255 - x),  # inverted: negative gains everywhere
        (x, np.full_like(x, 100.0)),  # nothing left
        (x, np.clip(x + rng.normal(size=x.shape) * 200, 0, 255)),  # noise swamps the image
        (x, gaussian_filter(x, 12)),  # extreme blur
        (x, np.roll(x, 5, axis=1)),  # misregistration
        (x, np.round(x / 32) * 32),  # 3-bit quantisation
        (x, np.clip((x - 128) * 1.3 + 128, 0, 255)),  # contrast stretch with clipping
        (half, np.clip(half + rng.normal(size=x.shape) * 10, 0, 255)),  # partly flat reference
        (np.full_like(x, 77.0), x),  # flat reference
    ]
    return pairs


@pytest.mark.parametrize("variant", sorted(V.VARIANTS))
def test_agrees_with_reference_implementation(images, variant):
    pairs = _reference_pairs(images)
    if variant == "vifvec":  # MATLAB's 0 / 0 for a flat reference is checked above
        pairs = [p for p in pairs if np.ptp(p[0]) > 0]
    ref = np.array([vif_reference(a, b, variant) for a, b in pairs])
    fast = V.vif(np.stack([a for a, _ in pairs]), np.stack([b for _, b in pairs]), variant)
    assert np.all(np.isfinite(ref))
    # Required: 1e-3 in Δv. Both compute in float64, so they agree to rounding; 1e-8 catches a
    # regression long before it matters.
    np.testing.assert_allclose(dv(fast), dv(ref), rtol=0, atol=1e-8)
    np.testing.assert_allclose(fast, ref, rtol=1e-8, atol=1e-12)


def test_agrees_with_reference_on_odd_and_non_square_sizes():
    rng = np.random.default_rng(3)
    x = gaussian_filter(rng.random((101, 150)) * 255, 1.5)
    y = np.clip(gaussian_filter(x, 1) + rng.normal(size=x.shape) * 3, 0, 255)
    for variant in V.VARIANTS:
        assert V.vif(x, y, variant) == pytest.approx(vif_reference(x, y, variant), rel=1e-9)
    side = V.min_side()
    xs = gaussian_filter(rng.random((side, side + 7)) * 255, 1)
    ys = xs + rng.normal(size=xs.shape) * 5
    assert V.vif(xs, ys) == pytest.approx(vif_reference(xs, ys), rel=1e-9)


# --------------------------------------------------------------------------- docs/method.md §1


def test_method_reference_values_blur_and_brightness(astronaut):
    """Deterministic corruptions: the paper port's values, to their 3 printed decimals."""
    expected = {
        "gaussian_blur": (0.695, 0.445, 0.315, 0.238, 0.154),
        "brightness": (0.669, 0.427, 0.317, 0.257, 0.220),
    }
    x = V.luma(astronaut)
    for name, values in expected.items():
        ys = np.stack(
            [V.luma(corrupt(astronaut, corruption_name=name, severity=s)) for s in range(1, 6)]
        )
        np.testing.assert_allclose(V.vif(np.broadcast_to(x, ys.shape), ys), values, atol=0.002)


def test_method_reference_values_gaussian_noise(astronaut):
    """Noise: the paper's values are one random draw. Over 40 seeds the VIF of a single draw
    has a standard deviation of 0.005-0.006 per severity (docs/vif.md), so the mean of 8 draws
    must lie within 0.02 (about 3.5 of those standard deviations) of the printed values."""
    expected = np.array([0.520, 0.441, 0.371, 0.314, 0.245])
    x = V.luma(astronaut)
    draws = []
    for seed in range(8):
        ys = np.stack([V.luma(gaussian_noise(astronaut, s, seed)) for s in NOISE_SIGMA])
        draws.append(V.vif(np.broadcast_to(x, ys.shape), ys))
    np.testing.assert_allclose(np.mean(draws, axis=0), expected, atol=0.02)


# --------------------------------------------------------------------------- torch


def _torch_devices():
    torch = pytest.importorskip("torch")
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("variant", sorted(V.VARIANTS))
def test_torch_agrees_with_numpy(images, variant):
    pairs = _reference_pairs(images)[::2]
    xs, ys = np.stack([a for a, _ in pairs]), np.stack([b for _, b in pairs])
    expected = V.vif(xs, ys, variant)
    for device in _torch_devices():
        got = V.vif(xs, ys, variant, device=device)
        np.testing.assert_allclose(dv(got), dv(expected), rtol=0, atol=1e-6)


def test_torch_accepts_tensors_and_delta_v_device(astronaut):
    torch = pytest.importorskip("torch")
    x = V.luma(astronaut)
    y = gaussian_filter(x, 1)
    got = V.vif(torch.from_numpy(x), torch.from_numpy(y), device="cpu")
    assert got == pytest.approx(V.vif(x, y), abs=1e-10)
    blurred = np.uint8(
        np.clip(np.round(gaussian_filter(astronaut.astype(float), (1, 1, 0))), 0, 255)
    )
    np.testing.assert_allclose(
        V.delta_v(astronaut, blurred, device="cpu"), V.delta_v(astronaut, blurred), atol=1e-9
    )


# --------------------------------------------------------------------------- bad input


def test_bad_input_gives_clear_errors(astronaut):
    x = V.luma(astronaut)
    with pytest.raises(ValueError, match="differ in shape"):
        V.vif(x, x[:200])
    with pytest.raises(ValueError, match="differ in shape"):
        V.delta_v(astronaut, astronaut[None].repeat(2, 0))
    with pytest.raises(TypeError, match="clean_rgb must be uint8"):
        V.delta_v(astronaut.astype(np.float32), astronaut)
    with pytest.raises(TypeError, match="ref_luma must be floating-point"):
        V.vif(astronaut[..., 0], x)
    bad = x.copy()
    bad[10, 10] = np.nan
    with pytest.raises(ValueError, match="dist_luma contains NaN"):
        V.vif(x, bad)
    bad[10, 10] = np.inf
    with pytest.raises(ValueError, match="ref_luma contains NaN or infinite"):
        V.vif(bad, x)
    with pytest.raises(ValueError, match="shape \\(H, W\\) or \\(N, H, W\\)"):
        V.vif(x[None, None], x[None, None])
    with pytest.raises(ValueError, match="shape \\(H, W, 3\\) or \\(N, H, W, 3\\)"):
        V.delta_v(astronaut[..., :2], astronaut[..., :2])
    with pytest.raises(ValueError, match="variant must be one of"):
        V.vif(x, x, variant="vifp")
    side = V.min_side()
    with pytest.raises(ValueError, match=f"at least {side} pixels"):
        V.vif(x[: side - 1], x[: side - 1])
    with pytest.raises(ValueError, match="batch_size"):
        V.vif(x, x, batch_size=0)


def test_missing_cuda_device_is_a_clear_error(astronaut):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    x = V.luma(astronaut)
    with pytest.raises(ValueError, match="sees no CUDA device"):
        V.vif(x, x, device="cuda")


def test_shipped_sp5_filters_are_pyrtools_bit_for_bit():
    """The filters the pyramid reads from the package (so that a job computing dv does not import
    pyrtools) are pyrtools' own: this fails on a pyrtools upgrade that changes them."""
    from pyrtools.pyramids.filters import steerable_filters

    from vcrbench.vif import _pyramid

    theirs = steerable_filters("sp5_filters")
    ours = _pyramid.shipped_sp5_filters()
    assert set(ours) == {"lo0filt", "lofilt", "bfilts"}
    for name, values in ours.items():
        want = np.asarray(theirs[name], dtype=np.float64)
        assert values.shape == want.shape and values.tobytes() == want.tobytes(), name


def test_computing_dv_does_not_import_pyrtools():
    """Δv in a fresh interpreter (as a generation job computes it) leaves pyrtools, scipy.signal
    and matplotlib unimported: about 2.3 s of every such job's start-up."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from vcrbench.vif import delta_v\n"
        "rng = np.random.default_rng(0)\n"
        "x = rng.integers(0, 256, (2, 96, 96, 3), dtype=np.uint8)\n"
        "y = np.clip(x.astype(int) + rng.integers(-20, 20, x.shape), 0, 255).astype(np.uint8)\n"
        "delta_v(x, y)\n"
        "print(sorted(m for m in ('pyrtools', 'scipy.signal', 'matplotlib') if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "[]", proc.stdout
