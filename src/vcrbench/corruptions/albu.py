"""The four Albumentations corruptions of the paper, on continuous parameters.

Albumentations (2.0.8, the last MIT release) draws its parameters from Python's ``random`` inside
each transform; here the transforms' functional cores are called with explicit parameters, so the
result depends only on the image, the parameters and the seed. Blur and median blur take odd kernel
sizes only; a continuous size k between two odd sizes k₀ < k₁ = k₀ + 2 gives the linear
interpolation of the two results, (1 − f)·T_{k₀}(x) + f·T_{k₁}(x) with f = (k − k₀)/2, which is
Albumentations' output at every odd size. ``NO_ALBUMENTATIONS_UPDATE=1`` is set before the
(lazy) import so that importing it never tries to reach PyPI.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Mapping

import numpy as np

from vcrbench.corruptions.registry import Param, register_corruption


@functools.cache
def _functional():
    """Albumentations' blur and pixel functional modules, imported on first use.

    Importing albumentations imports torch (``albumentations.pytorch``): about 1.5 s and 500 MB
    that jobs of the other corruptions need not pay.
    """
    os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")
    import albumentations.augmentations.blur.functional as fblur
    import albumentations.augmentations.pixel.functional as fpixel

    return fblur, fpixel


def _odd_interpolated(
    image: np.ndarray, ksize: float, op: Callable[[np.ndarray, int], np.ndarray]
) -> np.ndarray:
    """``op`` at a continuous kernel size: interpolate between the neighbouring odd sizes."""
    k0 = 2 * math.floor((ksize - 1) / 2) + 1
    frac = (ksize - k0) / 2.0

    def at(k: int) -> np.ndarray:
        return image if k <= 1 else op(image, k)

    if frac <= 0:
        return at(k0)
    return (1.0 - frac) * at(k0).astype(np.float64) + frac * at(k0 + 2).astype(np.float64)


@register_corruption(
    "blur",
    source="albumentations",
    params=[Param("ksize", 1.0, (1.0, 501.0), "box kernel size in pixels (1 = identity)")],
    similarity_class="blur",
)
def blur(image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator) -> np.ndarray:
    """Box blur (Albumentations ``Blur``: OpenCV ``blur``, reflect-101 border)."""
    return _odd_interpolated(image, p["ksize"], _functional()[0].box_blur)


@register_corruption(
    "median_blur",
    source="albumentations",
    params=[Param("ksize", 1.0, (1.0, 501.0), "median window size in pixels (1 = identity)")],
    similarity_class="blur",
)
def median_blur(image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator) -> np.ndarray:
    """Median filter (Albumentations ``MedianBlur``: OpenCV ``medianBlur``)."""
    return _odd_interpolated(image, p["ksize"], _functional()[0].median_blur)


@register_corruption(
    "hue_saturation_value",
    source="albumentations",
    params=[
        Param("hue_shift", 0.0, (-180.0, 180.0), "added to OpenCV's hue (0-180 scale, mod 180)"),
        Param("sat_shift", 0.0, (-255.0, 255.0), "added to saturation (0-255), clipped"),
        Param("val_shift", 0.0, (-255.0, 255.0), "added to value (0-255), clipped"),
    ],
)
def hue_saturation_value(
    image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator
) -> np.ndarray:
    """Shift hue, saturation and value (Albumentations ``HueSaturationValue``'s ``shift_hsv``)."""
    return _functional()[1].shift_hsv(image, p["hue_shift"], p["sat_shift"], p["val_shift"])


#: ColorJitter's four operations, in Albumentations' order (index = position in its ``order``).
_JITTER = (
    ("brightness", "adjust_brightness_torchvision"),
    ("contrast", "adjust_contrast_torchvision"),
    ("saturation", "adjust_saturation_torchvision"),
    ("hue", "adjust_hue_torchvision"),
)


@register_corruption(
    "color_jitter",
    source="albumentations",
    params=[
        Param("brightness", 1.0, (0.0, 10.0), "brightness factor (1 = identity)"),
        Param("contrast", 1.0, (0.0, 10.0), "contrast factor (1 = identity)"),
        Param("saturation", 1.0, (0.0, 10.0), "saturation factor (1 = identity)"),
        Param("hue", 0.0, (-0.5, 0.5), "hue shift as a fraction of the hue circle"),
    ],
)
def color_jitter(image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator) -> np.ndarray:
    """Brightness, contrast, saturation and hue (Albumentations ``ColorJitter``), in an order
    drawn from the seed as Albumentations draws it per call."""
    fpixel = _functional()[1]
    order = rng.permutation(len(_JITTER))
    x = image
    for i in order:
        name, fn = _JITTER[i]
        x = getattr(fpixel, fn)(x, p[name])
    return x
