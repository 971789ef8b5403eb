"""The nine ImageNet-C corruptions of the paper, on continuous parameters.

Each function follows ``imagecorruptions`` (the ``imagecorruptions-imaug`` 1.1.5 fork of Hendrycks &
Dietterich's code) step by step, with its fixed per-severity constants turned into parameters and
its random draws taken from a local ``numpy.random.Generator`` instead of numpy's or numba's global
state. Where the original uses an integer (kernel radius, glass-blur displacement and iterations)
a continuous generalisation is used that equals the original at integer values:

- ``defocus_blur`` radius r: the kernel is the linear interpolation of imagecorruptions' ``disk``
  kernels of radius ⌊r⌋ and ⌊r⌋+1 (so the output interpolates the two blurred images).
- ``motion_blur`` radius r: the kernel has ⌈2r+1⌉ taps and the last one is weighted by the fraction
  (2r+1) − ⌊2r+1⌋ of a tap it covers (a kernel of continuous length 2r+1).
- ``glass_blur`` max_delta d and iterations n, by randomised rounding: each pixel's displacement
  bound is ⌊d⌋ + Bernoulli(d − ⌊d⌋), its offsets uniform on {−bound, …, bound − 1} (for an integer
  d, imagecorruptions' ``randint(−d, d)``); ⌊n⌋ full passes, then one pass in which each pixel is
  moved with probability n − ⌊n⌋. Both are continuous in distribution and exact at integers.

The VCR authors' toolbox's own versions of some of them (the variant ``toolbox``) are in
:mod:`vcrbench.corruptions.toolbox`.

Two deliberate differences from imagecorruptions, both at most one grey level: results are rounded
to uint8 (imagecorruptions truncates with ``np.uint8``, which darkens every image by 0.5 on average
and makes the identity a visible change), and so is glass blur's intermediate uint8 image; the
``cast`` option (``sampling.cast: truncate``) truncates both as imagecorruptions does.
glass blur keeps imagecorruptions' "swap", which in numpy/numba semantics copies the displaced
pixel rather than exchanging the two (``a[i], a[j] = a[j], a[i]`` on array rows).
"""

from __future__ import annotations

import importlib.resources
import math
from collections.abc import Mapping
from functools import lru_cache

import cv2
import numpy as np

from vcrbench.corruptions.corruption import Param
from vcrbench.corruptions.registry import register_corruption
from vcrbench.corruptions.values import cast_uint8

INF = math.inf


# --------------------------------------------------------------------------- noise


@register_corruption(
    "gaussian_noise",
    source="imagenet-c",
    category="noise",
    params=[Param("sigma", 0.0, (0.0, INF), "standard deviation of additive noise on [0, 1]")],
    imagenet_c=[{"sigma": s} for s in (0.08, 0.12, 0.18, 0.26, 0.38)],
    similarity_class="noise",
)
def gaussian_noise(
    image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator
) -> np.ndarray:
    """Additive Gaussian noise, per pixel and channel, on the [0, 1] scale; clipped."""
    x = image / 255.0
    return np.clip(x + rng.normal(size=x.shape, scale=p["sigma"]), 0, 1) * 255


@register_corruption(
    "shot_noise",
    source="imagenet-c",
    category="noise",
    params=[Param("photons", INF, (1e-6, INF), "Poisson rate scale; larger is milder", "log")],
    imagenet_c=[{"photons": c} for c in (60, 25, 12, 5, 3)],
    similarity_class="noise",
)
def shot_noise(image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator) -> np.ndarray:
    """Poisson (shot) noise: Poisson(x·photons)/photons per pixel and channel; clipped."""
    c = p["photons"]
    x = image / 255.0
    return np.clip(rng.poisson(x * c) / float(c), 0, 1) * 255


@register_corruption(
    "impulse_noise",
    source="imagenet-c",
    category="noise",
    params=[Param("amount", 0.0, (0.0, 1.0), "fraction of values set to 0 or 1 (salt & pepper)")],
    imagenet_c=[{"amount": a} for a in (0.03, 0.06, 0.09, 0.17, 0.27)],
    similarity_class="noise",
)
def impulse_noise(
    image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator
) -> np.ndarray:
    """Salt-and-pepper noise (scikit-image ``random_noise(mode='s&p')``) per pixel and channel."""
    if p["amount"] == 0:
        return image
    from skimage.util import random_noise

    x = random_noise(image / 255.0, mode="s&p", rng=rng, amount=p["amount"])
    return np.clip(x, 0, 1) * 255


# --------------------------------------------------------------------------- blur


def gaussian_kernel(sigma: float, truncate: float = 4.0) -> np.ndarray:
    """scipy.ndimage's Gaussian: radius int(truncate·σ + 0.5), normalised to sum 1."""
    radius = int(truncate * sigma + 0.5)
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    kernel = np.exp(-0.5 * x * x / (sigma * sigma))
    return kernel / kernel.sum()


def gaussian_filter(x: np.ndarray, sigma: float) -> np.ndarray:
    """scikit-image ``gaussian(x, sigma, channel_axis=-1)`` (mode 'nearest', truncate 4).

    Computed as one separable OpenCV filter in float32, three to four times faster than scipy's
    float64 for the large σ of the domains; the difference (< 1e-6) can only decide exact .5
    ties when the result is rounded to uint8.
    """
    kernel = gaussian_kernel(sigma).astype(np.float32)
    out = cv2.sepFilter2D(
        np.asarray(x, dtype=np.float32), cv2.CV_32F, kernel, kernel, borderType=cv2.BORDER_REPLICATE
    )
    return out.astype(np.float64)


@register_corruption(
    "gaussian_blur",
    source="imagenet-c",
    category="blur",
    params=[Param("sigma", 0.0, (0.0, INF), "standard deviation of the Gaussian in pixels")],
    imagenet_c=[{"sigma": s} for s in (1, 2, 3, 4, 6)],
    similarity_class="blur",
)
def gaussian_blur(
    image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator
) -> np.ndarray:
    """Gaussian blur (as scikit-image ``gaussian``: 'nearest' border, truncated at 4σ)."""
    if p["sigma"] == 0:
        return image
    return np.clip(gaussian_filter(image / 255.0, p["sigma"]), 0, 1) * 255


@lru_cache(maxsize=256)
def disk_kernel(radius: float, alias_blur: float) -> np.ndarray:
    """imagecorruptions' ``disk`` kernel (read-only), cached."""
    from imagecorruptions.corruptions import disk

    kernel = disk(radius=radius, alias_blur=alias_blur)
    kernel.flags.writeable = False
    return kernel


def defocus_kernel(radius: float, alias_blur: float) -> np.ndarray:
    """imagecorruptions' ``disk`` kernel, linearly interpolated between integer radii."""
    r0 = math.floor(radius)
    frac = radius - r0
    k0 = disk_kernel(r0, alias_blur)
    if frac == 0:
        return k0
    k1 = disk_kernel(r0 + 1, alias_blur)
    size = max(k0.shape[0], k1.shape[0])
    out = np.zeros((size, size), dtype=np.float32)
    for k, w in ((k0, 1.0 - frac), (k1, frac)):
        pad = (size - k.shape[0]) // 2
        out[pad : pad + k.shape[0], pad : pad + k.shape[1]] += np.float32(w) * k
    return out


@register_corruption(
    "defocus_blur",
    source="imagenet-c",
    category="blur",
    params=[
        Param("radius", 0.0, (0.0, 100.0), "disk radius in pixels (continuous, see module doc)"),
        Param("alias_blur", 0.1, (0.01, 10.0), "σ of the Gaussian that anti-aliases the disk"),
    ],
    imagenet_c=[
        {"radius": r, "alias_blur": a}
        for r, a in ((3, 0.1), (4, 0.5), (6, 0.5), (8, 0.5), (10, 0.5))
    ],
    similarity_class="blur",
)
def defocus_blur(image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator) -> np.ndarray:
    """Convolution with an anti-aliased disk (OpenCV ``filter2D``, reflect-101 border)."""
    kernel = defocus_kernel(p["radius"], p["alias_blur"])
    x = cv2.filter2D(image / 255.0, -1, kernel)
    return np.clip(x, 0, 1) * 255


def _glass_moves_py(x, offsets, active, margin):  # pragma: no cover - compiled
    # imagecorruptions' loop order; "x[h, w], x[h', w'] = x[h', w'], x[h, w]" on array rows
    # copies x[h', w'] into x[h, w] and leaves x[h', w'] as it was: reproduced here.
    height, width = x.shape[0], x.shape[1]
    for i in range(offsets.shape[0]):
        for a in range(height - 2 * margin):
            h = height - margin - a
            for b in range(width - 2 * margin):
                if active[i, a, b]:
                    w = width - margin - b
                    hp = h + offsets[i, a, b, 1]
                    wp = w + offsets[i, a, b, 0]
                    for ch in range(x.shape[2]):
                        x[h, w, ch] = x[hp, wp, ch]
    return x


@lru_cache(maxsize=1)
def _glass_moves():
    """:func:`_glass_moves_py` compiled by numba (its on-disk cache), on first use: importing
    numba costs about 0.6 s that a process applying no glass blur (Snakemake itself, planning)
    need not pay."""
    from numba import njit

    return njit(cache=True)(_glass_moves_py)


def glass_moves(
    x: np.ndarray, max_delta: float, iterations: float, rng: np.random.Generator
) -> np.ndarray:
    """Glass blur's local pixel moves, in place, with continuous displacement and iterations.

    Both integers are generalised by randomised rounding: a pixel's displacement bound is
    ⌊d⌋ + Bernoulli(d − ⌊d⌋) and its offsets are uniform on {−bound, …, bound − 1}
    (imagecorruptions' ``randint(−d, d)``); the last of ⌈n⌉ passes moves each pixel with probability
    n − ⌊n⌋.
    """
    margin = math.ceil(max_delta)
    height, width = x.shape[:2]
    n_full = math.floor(iterations)
    frac = iterations - n_full
    passes = n_full + (frac > 0)
    if max_delta <= 0 or passes == 0 or min(height, width) <= 2 * margin:
        return x
    shape = (passes, height - 2 * margin, width - 2 * margin)
    bound = np.full(shape, math.floor(max_delta), dtype=np.int64)
    bound += rng.random(shape) < (max_delta - math.floor(max_delta))
    bound = bound[..., None]
    offsets = np.floor(rng.random((*shape, 2)) * (2 * bound)).astype(np.int64) - bound
    active = np.ones(shape, dtype=np.bool_)
    if frac > 0:
        active[-1] = rng.random(shape[1:]) < frac
    return _glass_moves()(x, offsets, active, margin)


#: Glass blur's σ, of the Gaussian blur before and after the moves (both glass blurs).
_GLASS_SIGMA = Param("sigma", 0.0, (0.0, INF), "σ of the Gaussian blur before and after the moves")


@register_corruption(
    "glass_blur",
    source="imagenet-c",
    category="blur",
    params=[
        _GLASS_SIGMA,
        Param("max_delta", 0.0, (0.0, 50.0), "largest pixel displacement (continuous)"),
        Param("iterations", 0.0, (0.0, 20.0), "passes of local pixel moves (continuous)"),
    ],
    imagenet_c=[
        {"sigma": s, "max_delta": d, "iterations": n}
        for s, d, n in ((0.7, 1, 2), (0.9, 2, 1), (1, 2, 3), (1.1, 3, 2), (1.5, 4, 2))
    ],
    similarity_class="blur",
)
def glass_blur(image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator) -> np.ndarray:
    """Gaussian blur, local random pixel moves, Gaussian blur again."""
    return _blur_moved(
        image, p["sigma"], lambda x: glass_moves(x, p["max_delta"], p["iterations"], rng)
    )


def _blur_moved(image: np.ndarray, sigma: float, move) -> np.ndarray:
    """Glass blur's frame: Gaussian blur (σ), cast to uint8 (rounded by default), ``move(x)`` (in
    place), the same Gaussian blur again."""
    x = image / 255.0
    if sigma > 0:
        x = gaussian_filter(x, sigma)
    x = cast_uint8(x * 255)  # rounded, or truncated under cast: truncate (values.casting)
    move(x)
    if sigma > 0:
        return np.clip(gaussian_filter(x / 255.0, sigma), 0, 1) * 255
    return x


#: The side of the square the VCR authors' glass blur moves pixels in: its loop runs over
#: ``range(32 - max_delta, max_delta, -1)`` for rows and columns, written for 32-px CIFAR images.
TOOLBOX_GLASS_CORNER = 32


@register_corruption(
    "glass_blur_toolbox",
    source="vcr-toolbox",
    category="blur",
    params=[
        _GLASS_SIGMA,
        Param("max_delta", 0.0, (0.0, 15.0), "largest pixel displacement (continuous)"),
    ],
    similarity_class="blur",
)
def glass_blur_toolbox(
    image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator
) -> np.ndarray:
    """Glass blur as the VCR authors' toolbox generated it: one pass of pixel moves, confined to
    the image's top-left 32x32 corner, between two Gaussian blurs (``transformations.py``)."""
    corner = slice(0, TOOLBOX_GLASS_CORNER)
    # x[corner, corner] is a view: its pixels are moved in place
    return _blur_moved(
        image, p["sigma"], lambda x: glass_moves(x[corner, corner], p["max_delta"], 1.0, rng)
    )


def motion_kernel(radius: float, sigma: float) -> np.ndarray:
    """Tap weights of imagecorruptions' motion blur for a continuous length 2·radius + 1."""
    length = 2.0 * radius + 1.0
    taps = np.arange(math.ceil(length), dtype=np.float64)
    if sigma <= 0:
        weights = (taps == 0).astype(np.float64)
    else:
        weights = np.exp(-(taps**2) / (2 * sigma**2)) * np.minimum(1.0, length - taps)
    return weights / weights.sum()


@register_corruption(
    "motion_blur",
    source="imagenet-c",
    category="blur",
    params=[
        Param("radius", 0.0, (0.0, 100.0), "blur length is 2·radius + 1 pixels (continuous)"),
        Param("sigma", 0.0, (0.0, INF), "σ of the Gaussian weights along the motion"),
    ],
    imagenet_c=[
        {"radius": r, "sigma": s} for r, s in ((10, 3), (15, 5), (15, 8), (15, 12), (20, 15))
    ],
)
def motion_blur(image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator) -> np.ndarray:
    """One-sided Gaussian-weighted blur along a random direction, angle ~ U(−45°, 45°)."""
    angle = rng.uniform(-45, 45)
    return motion_blur_at(image, p["radius"], p["sigma"], angle)


def motion_blur_at(image: np.ndarray, radius: float, sigma: float, angle: float) -> np.ndarray:
    """imagecorruptions' ``_motion_blur`` with a continuous radius; float result."""
    weights = motion_kernel(radius, sigma)
    length = 2.0 * radius + 1.0
    point = (length * np.sin(np.deg2rad(angle)), length * np.cos(np.deg2rad(angle)))
    hypot = math.hypot(*point)
    height, width = image.shape[:2]
    shifts = []
    for i, w in enumerate(weights):
        dy = -math.ceil(((i * point[0]) / hypot) - 0.5)
        dx = -math.ceil(((i * point[1]) / hypot) - 0.5)
        if abs(dy) >= height or abs(dx) >= width:
            break  # as imagecorruptions: the motion left the image
        if w > 0:
            shifts.append((dy, dx, w))
    m = max(max(abs(dy), abs(dx)) for dy, dx, _ in shifts)
    # Edge padding reproduces imagecorruptions' shift(), which repeats the border row/column.
    padded = np.pad(image, ((m, m), (m, m), (0, 0)), mode="edge").astype(np.float64)
    out = np.zeros(image.shape, dtype=np.float64)
    for dy, dx, w in shifts:
        out += w * padded[m - dy : m - dy + height, m - dx : m - dx + width]
    return np.clip(out, 0, 255)


# --------------------------------------------------------------------------- weather / digital


@register_corruption(
    "brightness",
    source="imagenet-c",
    category="weather",
    params=[Param("delta", 0.0, (0.0, 1.0), "added to V (HSV, [0, 1] scale)")],
    imagenet_c=[{"delta": d} for d in (0.1, 0.2, 0.3, 0.4, 0.5)],
)
def brightness(image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator) -> np.ndarray:
    """Add ``delta`` to the value channel in HSV; clipped.

    With hue and saturation fixed, RGB is proportional to V = max(R, G, B), so the HSV round trip
    of imagecorruptions (scikit-image ``rgb2hsv``/``hsv2rgb``) is computed in closed form as
    RGB · V'/V (grey V' where V = 0): the same values up to float rounding, five times faster.
    """
    if p["delta"] == 0:
        return image
    x = image / 255.0
    v = x.max(axis=2, keepdims=True)
    v_new = np.minimum(v + p["delta"], 1.0)
    out = np.where(v > 0, x * (v_new / np.where(v > 0, v, 1.0)), v_new)
    return np.clip(out, 0, 1) * 255


FROST_FILES = ("frost1.png", "frost2.png", "frost3.png", "frost4.jpg", "frost5.jpg", "frost6.jpg")


@lru_cache(maxsize=6)
def frost_image(index: int) -> np.ndarray:
    """One of the six frost photographs shipped inside imagecorruptions (BGR, as cv2 reads it)."""
    ref = importlib.resources.files("imagecorruptions") / "frost" / FROST_FILES[index]
    with importlib.resources.as_file(ref) as path:
        img = cv2.imread(str(path))
    if img is None:
        raise FileNotFoundError(f"cannot read imagecorruptions' frost image {ref}")
    img.flags.writeable = False
    return img


@lru_cache(maxsize=64)
def _frost_rescaled(index: int, height: int, width: int) -> np.ndarray:
    frost = frost_image(index)
    fh, fw = frost.shape[:2]
    scale = 1.0
    if fh < height and fw >= width:
        scale = height / fh
    elif fh >= height and fw < width:
        scale = width / fw
    elif fh < height and fw < width:
        scale = max(height / fh, width / fw)
    scale *= 1.1
    size = (int(np.ceil(fw * scale)), int(np.ceil(fh * scale)))
    out = cv2.resize(frost, dsize=size, interpolation=cv2.INTER_CUBIC)
    out.flags.writeable = False
    return out


@register_corruption(
    "frost",
    source="imagenet-c",
    category="weather",
    params=[
        Param("image_weight", 1.0, (0.0, 2.0), "weight of the image"),
        Param("frost_weight", 0.0, (0.0, 2.0), "weight of the frost layer"),
    ],
    imagenet_c=[
        {"image_weight": a, "frost_weight": b}
        for a, b in ((1, 0.4), (0.8, 0.6), (0.7, 0.7), (0.65, 0.7), (0.6, 0.75))
    ],
)
def frost(image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator) -> np.ndarray:
    """Weighted sum of the image and a random crop of one of six frost photographs; clipped."""
    height, width = image.shape[:2]
    index = int(rng.integers(6))
    layer = _frost_rescaled(index, height, width)
    top = int(rng.integers(0, layer.shape[0] - height))
    left = int(rng.integers(0, layer.shape[1] - width))
    return frost_at(image, p["image_weight"], p["frost_weight"], index, top, left)


def frost_at(
    image: np.ndarray, image_weight: float, frost_weight: float, index: int, top: int, left: int
) -> np.ndarray:
    """The frost blend for a given frost photograph and crop position; float result."""
    height, width = image.shape[:2]
    layer = _frost_rescaled(index, height, width)
    crop = layer[top : top + height, left : left + width][..., [2, 1, 0]]
    return np.clip(image_weight * image + frost_weight * crop.astype(np.float64), 0, 255)
