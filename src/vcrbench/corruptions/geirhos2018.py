"""The image manipulations of Geirhos et al. (2018) as corruptions on continuous parameters.

Source: R. Geirhos, C. R. M. Temme, J. Rauber, H. H. Schütt, M. Bethge, F. A. Wichmann,
"Generalisation in humans and deep neural networks", NeurIPS 2018; supplementary section "Image
preprocessing and distortions", and the authors' released code and data (GitHub
rgeirhos/generalisation-humans-DNNs, ``code/image_manipulation.py``, CC-BY 4.0) for the constants
the paper only describes (the cone and opponent-colour matrices, the monitor's luminance curve,
the mean amplitude spectrum).

Every manipulation except colour and false colour works on the greyscale image (scikit-image
``rgb2gray``, 0.2125 R + 0.7154 G + 0.0721 B on [0, 1]) and returns it copied to three channels,
as the stimuli were shown to humans and networks. Each function returns floats on 0-255; the
registry rounds to uint8. None of them draws from global random state: phase noise draws from the
``rng`` it is given, the others are deterministic.

Between Geirhos' fixed conditions each parameter is a continuous generalisation that equals the
paper at those conditions (the docstrings say what it means):

==============================  =====================  ===========================================
name                            parameter (identity)   Geirhos' conditions
==============================  =====================  ===========================================
geirhos_contrast                contrast (1.0)         c100 … c01 → 1.0 … 0.01
geirhos_highpass                inv_sigma = 1/σ (0)    σ = ∞ (original), 3 … 0.4 → 0, 1/3 … 2.5
geirhos_phase_noise             width in degrees (0)   0, 30, …, 180
geirhos_power_equalisation      amount (0)             original → 0, equalised → 1
geirhos_greyscale               amount (0)             colour → 0, greyscale → 1
geirhos_false_colour            amount (0)             true → 0, opponent colours → 1
==============================  =====================  ===========================================

The "identity" of the greyscale manipulations is the greyscale image (Geirhos' undistorted
condition), not the colour original: Δv there is small but not zero (see the domains file).

Not registered:

- **Rotation** (0/90/180/270°, :func:`geirhos_rotation`) is provided as a function only. Δv
  compares pixel-aligned images (VIF of clean vs corrupted at the same positions), so a rotated
  image measures as an almost total loss of information although nothing was lost (median Δv
  0.975 at 90°, 180° and 270° on the embedded images): rotation has no place on the Δv axis, and
  its four conditions are not a degree of degradation. Rotation by 90° and 270° also changes the
  shape of a non-square image, which a corruption may not.
- **Eidolon I/II/III** (``PartiallyCoherentDisarray(reach, coherence, grain)`` of Koenderink et
  al.'s Eidolon toolbox). No installable package implements it: the toolbox exists only as
  Python 2 sources on GitHub (gestaltrevision/Eidolon, whose LEGAL.txt disclaims warranty but
  grants no licence to reuse), and the PyPI name ``eidolon`` belongs to an unrelated HTTP
  library. Re-implementing its scale-space disarray from the description would not reproduce the
  stimuli the human data were measured on, so it is left out rather than approximated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache

import numpy as np

from vcrbench.corruptions.corruption import Param
from vcrbench.corruptions.registry import register_corruption
from vcrbench.errors import CorruptionError

INF = math.inf
SOURCE = "geirhos2018"

#: Mean pixel value of Geirhos et al.'s test images (greyscale, [0, 1]): their padding value for
#: the Gaussian filters and the mean that high-pass images are moved to.
MEAN_GREY = 0.4423
#: Geirhos' conditions, for the human-data reader and the tests.
CONTRASTS = (1.0, 0.5, 0.3, 0.15, 0.1, 0.05, 0.03, 0.01)
HIGHPASS_SIGMAS = (INF, 3.0, 1.5, 1.0, 0.7, 0.55, 0.45, 0.4)
PHASE_NOISE_WIDTHS = (0.0, 30.0, 60.0, 90.0, 120.0, 150.0, 180.0)
ROTATION_ANGLES = (0.0, 90.0, 180.0, 270.0)


# --------------------------------------------------------------------------- helpers


def grey(image: np.ndarray) -> np.ndarray:
    """scikit-image ``rgb2gray`` of an HxWx3 uint8 image: HxW float64 on [0, 1]."""
    from skimage.color import rgb2gray

    return rgb2gray(np.asarray(image, dtype=np.float64) / 255.0)


def _to_rgb(values: np.ndarray) -> np.ndarray:
    """A [0, 1] grey image (HxW) as HxWx3 floats on 0-255, clipped as the paper clips."""
    return np.repeat((np.clip(values, 0.0, 1.0) * 255.0)[..., None], 3, axis=2)


# --------------------------------------------------------------------------- contrast


@register_corruption(
    "geirhos_contrast",
    source=SOURCE,
    category="digital",
    params=[
        Param(
            "contrast",
            1.0,
            (1e-4, 1.0),
            "contrast level as a fraction (Geirhos' c100 = 1.0 … c01 = 0.01)",
            "log",
        )
    ],
    similarity_class="contrast",
)
def geirhos_contrast(
    image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator
) -> np.ndarray:
    """Greyscale, then each value v → c·v + (1 − c)/2 (contrast c around mid-grey 0.5).

    The paper's formula is already continuous in c; c = 1 is the greyscale image, c → 0 a uniform
    grey of 0.5. The path is geometric (``scale="log"``) because the effect is multiplicative, as
    are Geirhos' levels (1 %, 3 %, 5 %, 10 %, …).
    """
    c = p["contrast"]
    return _to_rgb(c * grey(image) + (1.0 - c) / 2.0)


# --------------------------------------------------------------------------- high-pass


def _constant_gaussian_matrix(n: int, sigma: float) -> np.ndarray:
    """scipy ``gaussian_filter1d`` (truncate 4) along an axis of length n as an n x n matrix.

    scipy's kernel has radius int(4σ + ½) and is normalised over it; with ``mode='constant'``
    the padded values contribute cval times the weight outside the image, which the caller adds
    by filtering (x − cval) and adding cval back. As a matrix, any σ costs the same, so σ → ∞
    (inv_sigma → 0) needs no kernel of millions of taps.
    """
    radius = int(4.0 * sigma + 0.5)
    if radius <= 100_000:
        k = np.arange(-radius, radius + 1, dtype=np.float64)
        norm = np.exp(-0.5 * (k / sigma) ** 2).sum()
    else:  # the sum as an integral (exact to ~1e-10 at such σ: Euler-Maclaurin)
        from scipy.special import erf

        norm = sigma * math.sqrt(2.0 * math.pi) * erf((radius + 0.5) / (sigma * math.sqrt(2.0)))
    d = np.subtract.outer(np.arange(n), np.arange(n)).astype(np.float64)
    matrix = np.exp(-0.5 * (d / sigma) ** 2) / norm
    matrix[np.abs(d) > radius] = 0.0
    return matrix


def lowpass_constant(values: np.ndarray, sigma: float, cval: float = MEAN_GREY) -> np.ndarray:
    """``scipy.ndimage.gaussian_filter(values, σ, mode='constant', cval=cval, truncate=4)``.

    Geirhos' low-pass filter (constant padding with the mean grey), for any σ > 0.
    """
    rows = _constant_gaussian_matrix(values.shape[0], sigma)
    cols = _constant_gaussian_matrix(values.shape[1], sigma)
    return cval + rows @ (values - cval) @ cols.T


@register_corruption(
    "geirhos_highpass",
    source=SOURCE,
    params=[Param("inv_sigma", 0.0, (0.0, INF), "1/σ of the Gaussian, σ in pixels (0: σ = ∞)")],
)
def geirhos_highpass(
    image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator
) -> np.ndarray:
    """Greyscale minus its Gaussian low-pass (constant padding 0.4423), mean moved to 0.4423.

    As the paper: high-pass = image − low-pass; the difference between 0.4423 (the mean grey of
    their test images) and the high-pass image's mean is added back, so that images approach a
    uniform grey of 0.4423 as σ shrinks; values outside [0, 1] are clipped. The parameter is
    1/σ so that the identity (Geirhos' "σ = ∞, original image" condition) is a finite 0 and the
    strength grows with it. inv_sigma = 0 is the unfiltered greyscale image, as in the
    experiment; as inv_sigma → 0 the manipulation tends to the same image with its mean moved to
    0.4423 (the low-pass tends to the constant padding), a shift of brightness only.
    """
    inv_sigma = p["inv_sigma"]
    values = grey(image)
    if inv_sigma == 0:
        return _to_rgb(values)
    high = values - lowpass_constant(values, 1.0 / inv_sigma)
    return _to_rgb(high + (MEAN_GREY - high.mean()))


# --------------------------------------------------------------------------- Fourier domain


def phase_shifts(shape: tuple[int, int], width: float, rng: np.random.Generator) -> np.ndarray:
    """Phase shifts (radians) for an image of ``shape``: U[−w, w] per symmetric frequency pair.

    One shift is drawn per pair of frequencies k and −k (numpy FFT layout); the member with the
    smaller flat index gets it and its partner gets its negative. The pair's coefficients are
    complex conjugates, with opposite phases, so moving both phases by the same amount in
    opposite directions keeps them conjugate and the image real (the paper adds "the same phase
    noise to both frequencies of each symmetric pair"). Self-conjugate frequencies (the mean and,
    for even sizes, the Nyquist ones) are real and keep their phase. ``width`` is in degrees.
    """
    h, w = shape
    noise = rng.uniform(-1.0, 1.0, size=(h, w)) * math.radians(width)
    rows, cols = np.arange(h), np.arange(w)
    neg_rows, neg_cols = (-rows) % h, (-cols) % w
    flat = rows[:, None] * w + cols[None, :]
    flat_neg = neg_rows[:, None] * w + neg_cols[None, :]
    partner = noise[np.ix_(neg_rows, neg_cols)]
    return np.where(flat < flat_neg, noise, np.where(flat > flat_neg, -partner, 0.0))


@register_corruption(
    "geirhos_phase_noise",
    source=SOURCE,
    params=[Param("width", 0.0, (0.0, 180.0), "phase noise U[−width, width] in degrees")],
)
def geirhos_phase_noise(
    image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator
) -> np.ndarray:
    """Greyscale; every frequency's phase shifted by U[−w, w] (w in degrees); clipped to [0, 1].

    Amplitudes are kept. Geirhos' widths are 0, 30, …, 180 degrees; the paper's definition is
    continuous in w. At 180° the phases are uniform on the circle (beyond, the shifts only wrap
    around), so 180 is the end of the valid range. w = 0 is the greyscale image up to rounding.

    This follows the paper's text, not the authors' released code: there the shift added to a
    frequency is subtracted from a different one (its flattened pairing runs in reverse order),
    so the spectrum is not Hermitian and the real part of the inverse FFT averages two
    differently shifted spectra, which lowers contrast (RMS contrast 0.15 instead of 0.22 at 180°
    on the embedded images) and clipping (1.2 % instead of 6 % of pixels there); the paper
    reports 0.038 % clipped on its images.
    """
    values = grey(image)
    spectrum = np.fft.fft2(values) * np.exp(1j * phase_shifts(values.shape, p["width"], rng))
    return _to_rgb(np.fft.ifft2(spectrum).real)


#: Radially averaged mean amplitude spectrum of Geirhos et al.'s test images: (frequency in
#: cycles per pixel, |FFT| / sqrt(H·W)), averaged in 16 log-spaced rings of the 224x224 mean
#: amplitude spectrum of their greyscale images that the authors released
#: (``mean_power_spectrum_grey.npy``), over the frequencies off the two axes (the axes carry the
#: cross that the borders of non-periodic images add to every spectrum). It falls as about
#: 1/f^1.2 up to 0.35 cycles/pixel, faster beyond (their downsampling's anti-aliasing). On the
#: embedded images, equalising to it or to the full released spectrum gives the same Δv (median
#: 0.833 vs 0.829) and clips 0.5 % vs 0.7 % of pixels (the paper: 0.013 % on its images).
MEAN_AMPLITUDE_SPECTRUM = (
    (0.006313, 6.062),
    (0.009982, 3.794),
    (0.0136, 2.655),
    (0.0182, 1.842),
    (0.02447, 1.316),
    (0.03261, 0.9064),
    (0.04352, 0.6247),
    (0.05818, 0.4269),
    (0.07835, 0.2938),
    (0.1054, 0.2),
    (0.1418, 0.1393),
    (0.1903, 0.09819),
    (0.2555, 0.07115),
    (0.3433, 0.05004),
    (0.4576, 0.02962),
    (0.5819, 0.01651),
)


@lru_cache(maxsize=16)
def _mean_amplitude_spectrum(shape: tuple[int, int]) -> np.ndarray:
    h, w = shape
    f = np.hypot(np.fft.fftfreq(h)[:, None], np.fft.fftfreq(w)[None, :])
    knots = np.log(np.asarray(MEAN_AMPLITUDE_SPECTRUM))
    log_f = np.log(np.where(f > 0, f, 1.0))
    log_a = np.interp(log_f, knots[:, 0], knots[:, 1])
    # Beyond the ends, extend the first and last segments (straight lines in log-log).
    for end, (i, j) in ((log_f < knots[0, 0], (0, 1)), (log_f > knots[-1, 0], (-2, -1))):
        slope = (knots[j, 1] - knots[i, 1]) / (knots[j, 0] - knots[i, 0])
        log_a = np.where(end, knots[j, 1] + slope * (log_f - knots[j, 0]), log_a)
    amplitude = math.sqrt(h * w) * np.exp(log_a)
    amplitude[0, 0] = MEAN_GREY * h * w
    amplitude.flags.writeable = False
    return amplitude


def mean_amplitude_spectrum(shape: tuple[int, int]) -> np.ndarray:
    """The target amplitude spectrum |FFT| for a greyscale [0, 1] image of ``shape`` (numpy layout).

    :data:`MEAN_AMPLITUDE_SPECTRUM` interpolated linearly in log-log (extended by its first and
    last segments), scaled by sqrt(H·W): for a stationary image the expected |FFT|² grows with the
    number of pixels, so this keeps the pixel contrast of an equalised image independent of its
    size and reproduces the released spectrum's rings at 224x224. The DC term is 0.4423·H·W:
    a mean spectrum's DC term is the images' mean grey times H·W, and the paper gives that mean
    as 0.4423 (the released file's DC corresponds to 0.4545, near the first batch's 0.454), so
    equalised images have a mean of 0.4423. Radially symmetric, so A(k) = A(−k) and equalised
    images stay real. Read-only, cached per shape.
    """
    return _mean_amplitude_spectrum((int(shape[0]), int(shape[1])))


@register_corruption(
    "geirhos_power_equalisation",
    source=SOURCE,
    params=[Param("amount", 0.0, (0.0, 1.0), "fraction of the way to the mean amplitude spectrum")],
)
def geirhos_power_equalisation(
    image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator
) -> np.ndarray:
    """Greyscale; amplitude spectrum set to the mean spectrum of natural images, phases kept.

    amount a moves every frequency's amplitude linearly from the image's own to the target:
    |F'| = (1 − a)·|F| + a·A (phases unchanged; clipped to [0, 1] after the inverse FFT). a = 0 is
    the greyscale image, a = 1 Geirhos' power-equalised condition (all images share one amplitude
    -- hence power -- spectrum). The target A is :func:`mean_amplitude_spectrum`: the paper used
    the mean amplitude spectrum of its own test images, which exists only at their 224x224 size
    and for their image set, so a radially averaged table of it is shipped (see
    :data:`MEAN_AMPLITUDE_SPECTRUM`) that applies to any size.
    """
    return _to_rgb(power_equalised(grey(image), p["amount"]))


def power_equalised(values: np.ndarray, amount: float) -> np.ndarray:
    """The power-equalised grey image (HxW, before clipping): |F'| = (1 − a)·|F| + a·A."""
    spectrum = np.fft.fft2(values)
    target = (1.0 - amount) * np.abs(spectrum) + amount * mean_amplitude_spectrum(values.shape)
    return np.fft.ifft2(target * np.exp(1j * np.angle(spectrum))).real


# --------------------------------------------------------------------------- colour


@register_corruption(
    "geirhos_greyscale",
    source=SOURCE,
    params=[Param("amount", 0.0, (0.0, 1.0), "mix of the greyscale image (1: rgb2gray)")],
)
def geirhos_greyscale(
    image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator
) -> np.ndarray:
    """(1 − a)·RGB + a·grey: a = 0 the colour image, a = 1 the ``rgb2gray`` image (Geirhos' bw).

    The colour experiment is dichotomous; a linear mix is the natural path between its two
    conditions (a desaturation that keeps the ``rgb2gray`` grey of every pixel).
    """
    a = p["amount"]
    x = np.asarray(image, dtype=np.float64)
    g = grey(image)[..., None] * 255.0
    return (1.0 - a) * x + a * g


#: RGB (linear light, after the monitor curve) to cone activities L, M, S: Geirhos et al.'s
#: matrix C, from their monitor's measured emission spectra of pure red, green and blue and the
#: 2-degree LMS cone fundamentals (values from their released code).
CONE_MATRIX = np.array(
    [
        [0.1619982647, 0.208049264, 0.0389347448],
        [0.0330275785, 0.2496504557, 0.0618343518],
        [0.0015524055, 0.0198861001, 0.1890224274],
    ]
)
#: Cone contrasts (relative to the mid-grey white point) to DKL (luminance, L−M, S−luminance):
#: their matrix D, following Brainard (1996), "Cone contrast and opponent modulation color spaces".
DKL_MATRIX = np.array(
    [
        [9.27590805, 9.27590805, 0.0],
        [7.86421647, -9.33587662, 0.0],
        [-3.39709047, -3.39709047, 12.16230246],
    ]
)
#: The white point: cone activities of linear mid-grey (0.5, 0.5, 0.5).
WHITE_POINT = CONE_MATRIX @ np.full(3, 0.5)
#: Their monitor's measured luminance (relative, [0, 1]) at grey values 0-255: the lookup table
#: f_monitor that they released (``x_gamma_function.npy``), to 6 significant digits.
MONITOR_LUMINANCE = (
    0, 5.95205e-06, 1.77775e-05, 2.85179e-05, 4.19042e-05, 6.40554e-05, 8.70469e-05,
    0.000127249, 0.000172374, 0.000232279, 0.00029494, 0.000374099, 0.000474784, 0.000577246,
    0.000701381, 0.000842339, 0.00101235, 0.00120593, 0.00140585, 0.00163021, 0.00188321,
    0.00215639, 0.00245838, 0.0027856, 0.00314711, 0.0035396, 0.00395564, 0.00440921,
    0.00488916, 0.00542133, 0.00597739, 0.00657095, 0.00722027, 0.00781033, 0.00843564,
    0.00908276, 0.0097647, 0.010482, 0.0112339, 0.0120098, 0.0128254, 0.0136655,
    0.0145558, 0.0154839, 0.0164411, 0.0174261, 0.0184627, 0.0195257, 0.0207034,
    0.0218513, 0.0230307, 0.0242607, 0.0255277, 0.0268348, 0.0281872, 0.0295689,
    0.030999, 0.0324816, 0.0340004, 0.0355629, 0.0371556, 0.0388053, 0.0405157,
    0.0422295, 0.0441212, 0.0458717, 0.0476804, 0.0495353, 0.0514408, 0.0533712,
    0.0553602, 0.0573917, 0.0594536, 0.061568, 0.0637225, 0.0659366, 0.068223,
    0.0705204, 0.0728723, 0.0752555, 0.0778643, 0.0803693, 0.0829119, 0.0855159,
    0.0881648, 0.0908564, 0.0936108, 0.0964178, 0.0992427, 0.102134, 0.105069,
    0.108086, 0.111142, 0.114255, 0.117386, 0.120592, 0.123914, 0.126918,
    0.130004, 0.133091, 0.136268, 0.139459, 0.142733, 0.146022, 0.149325,
    0.152685, 0.156135, 0.159633, 0.163199, 0.166749, 0.170384, 0.174055,
    0.178021, 0.181791, 0.185607, 0.189476, 0.193358, 0.197345, 0.201389,
    0.205439, 0.209496, 0.213651, 0.217863, 0.222115, 0.226404, 0.230711,
    0.235086, 0.239501, 0.244094, 0.248251, 0.252515, 0.25679, 0.261168,
    0.265541, 0.269973, 0.274431, 0.279011, 0.283521, 0.28812, 0.292734,
    0.297401, 0.302049, 0.306777, 0.311518, 0.316641, 0.321446, 0.326256,
    0.331199, 0.336116, 0.341109, 0.346036, 0.351095, 0.356186, 0.361266,
    0.366347, 0.37152, 0.376633, 0.381799, 0.386929, 0.392284, 0.398163,
    0.403782, 0.409568, 0.415247, 0.420946, 0.426738, 0.432557, 0.438334,
    0.444225, 0.450077, 0.456023, 0.461913, 0.46777, 0.47363, 0.479632,
    0.485595, 0.491945, 0.49798, 0.503984, 0.510073, 0.516019, 0.522112,
    0.528235, 0.53444, 0.540563, 0.546738, 0.552908, 0.559164, 0.56525,
    0.571467, 0.577751, 0.584048, 0.590444, 0.596381, 0.602388, 0.608438,
    0.6147, 0.620739, 0.626927, 0.633113, 0.639469, 0.645646, 0.65197,
    0.658259, 0.664816, 0.67118, 0.6777, 0.684221, 0.691208, 0.697906,
    0.704457, 0.711327, 0.718108, 0.725017, 0.731795, 0.73896, 0.745935,
    0.753101, 0.760136, 0.767471, 0.774758, 0.782072, 0.789315, 0.796928,
    0.804221, 0.811322, 0.818638, 0.825754, 0.833023, 0.840305, 0.847744,
    0.855081, 0.862437, 0.869665, 0.87718, 0.884745, 0.891957, 0.899215,
    0.90646, 0.914072, 0.920756, 0.92779, 0.934489, 0.941307, 0.947602,
    0.953921, 0.959994, 0.966016, 0.971232, 0.976579, 0.981559, 0.986291,
    0.990367, 0.994309, 0.997653, 1,
)  # fmt: skip


@lru_cache(maxsize=1)
def _monitor_table() -> np.ndarray:
    table = np.asarray(MONITOR_LUMINANCE, dtype=np.float64)
    table.flags.writeable = False
    return table


def monitor_luminance(values: np.ndarray) -> np.ndarray:
    """Geirhos' f_monitor: grey values (0-255 floats) to emitted luminance on [0, 1].

    Exact table values at integers, linear in between (so :func:`inverse_monitor_luminance` is
    its exact inverse).
    """
    return np.interp(values, np.arange(256.0), _monitor_table())


def inverse_monitor_luminance(luminance: np.ndarray) -> np.ndarray:
    """Inverse of :func:`monitor_luminance`: luminance in [0, 1] to grey values (0-255 floats)."""
    return np.interp(luminance, _monitor_table(), np.arange(256.0))


def to_dkl(image: np.ndarray) -> np.ndarray:
    """RGB grey values (HxWx3, 0-255) to DKL (luminance, L−M, S−luminance), as Geirhos et al."""
    cones = monitor_luminance(np.asarray(image, dtype=np.float64)) @ CONE_MATRIX.T
    return (cones - WHITE_POINT) @ DKL_MATRIX.T


def from_dkl(dkl: np.ndarray) -> np.ndarray:
    """Inverse of :func:`to_dkl`; linear RGB clipped to [0, 1] before the monitor curve."""
    cones = dkl @ np.linalg.inv(DKL_MATRIX).T + WHITE_POINT
    linear = cones @ np.linalg.inv(CONE_MATRIX).T
    return inverse_monitor_luminance(np.clip(linear, 0.0, 1.0))


@register_corruption(
    "geirhos_false_colour",
    source=SOURCE,
    params=[Param("amount", 0.0, (0.0, 1.0), "hue rotation in DKL, 180°·amount (1: opponent)")],
)
def geirhos_false_colour(
    image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator
) -> np.ndarray:
    """Opponent colours at equal luminance: the DKL chromatic axes rotated by 180°·amount.

    As the paper: RGB → monitor luminance → cone activities (C) → DKL (D); Geirhos' false colour
    multiplies both chromatic channels (L−M and S−luminance) by −1, keeping the luminance channel,
    then converts back and clips to [0, 1]. Negating both axes is a rotation by 180° of the
    isoluminant plane, so amount a rotates it by 180°·a: every intermediate image keeps the
    luminance and the chromatic contrast of the original and shifts its hues part of the way
    (a = 0 the original colour image, a = 1 Geirhos' opponent colours). Equals the authors'
    released code at a = 1 up to one grey level (their inverse monitor curve picks the nearest
    table entry). Saturated colours leave the monitor's gamut when inverted: the paper reports
    0.34 % of pixels clipped on its images, the same constants clip 0-80 % of the pixels (median
    about 20 %) of the embedded and scikit-image photographs, so the clipping is image-dependent.
    """
    a = p["amount"]
    if a == 0:
        return image
    dkl = to_dkl(image)
    cos, sin = math.cos(math.pi * a), math.sin(math.pi * a)
    if a == 1:
        cos, sin = -1.0, 0.0
    lm, s = dkl[..., 1].copy(), dkl[..., 2].copy()
    dkl[..., 1] = cos * lm - sin * s
    dkl[..., 2] = sin * lm + cos * s
    return from_dkl(dkl)


# --------------------------------------------------------------------------- rotation


def geirhos_rotation(
    image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator | None = None
) -> np.ndarray:
    """Greyscale image rotated counter-clockwise by 0, 90, 180 or 270 degrees (not registered).

    As the authors' code: 90° = transpose, then reverse the row order; 180° = reverse rows and
    columns; 270° = reverse the rows, then transpose (``numpy.rot90``). Returns HxWx3 floats on
    0-255 (WxHx3 for 90° and 270°). Not a corruption on the Δv axis: see the module docstring.
    """
    angle = float(p["angle"])
    if angle not in ROTATION_ANGLES:
        raise CorruptionError(
            f"corruption 'geirhos_rotation': parameter 'angle' = {angle!r} must be one of "
            f"{list(ROTATION_ANGLES)} degrees"
        )
    return _to_rgb(np.rot90(grey(image), k=int(angle) // 90))
