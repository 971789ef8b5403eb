"""The Albumentations corruptions of the paper, on continuous parameters.

Albumentations (2.0.8, the last MIT release) draws its parameters from Python's ``random`` inside
each transform; here the transforms' functional cores are called with explicit parameters, so the
result depends only on the image, the parameters and the seed. Blur and median blur take odd kernel
sizes only; a continuous size k between two odd sizes k₀ < k₁ = k₀ + 2 gives the linear
interpolation of the two results, (1 − f)·T_{k₀}(x) + f·T_{k₁}(x) with f = (k − k₀)/2, which is
Albumentations' output at every odd size. ``motion_blur_line`` is the motion blur of the authors'
toolbox, Albumentations 0.5's ``MotionBlur`` (a random straight line in the kernel; 2.0.8 draws a
different, centred line), whose random draws are explicit parameters here. The variant
``toolbox`` of the three kernel-size corruptions (odd sizes only, as the VCR authors' toolbox draws
them) is in :mod:`vcrbench.corruptions.toolbox`.
``NO_ALBUMENTATIONS_UPDATE=1`` is set before the (lazy) import so that importing it never tries to
reach PyPI.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Mapping

import cv2
import numpy as np

from vcrbench.corruptions.corruption import Param
from vcrbench.corruptions.registry import register_corruption


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
    category="blur",
    params=[Param("ksize", 1.0, (1.0, 501.0), "box kernel size in pixels (1 = identity)")],
    similarity_class="blur",
)
def blur(image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator) -> np.ndarray:
    """Box blur (Albumentations ``Blur``: OpenCV ``blur``, reflect-101 border)."""
    return _odd_interpolated(image, p["ksize"], _functional()[0].box_blur)


@register_corruption(
    "median_blur",
    source="albumentations",
    category="blur",
    params=[Param("ksize", 1.0, (1.0, 501.0), "median window size in pixels (1 = identity)")],
    similarity_class="blur",
)
def median_blur(image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator) -> np.ndarray:
    """Median filter (Albumentations ``MedianBlur``: OpenCV ``medianBlur``)."""
    return _odd_interpolated(image, p["ksize"], _functional()[0].median_blur)


def _end(fraction: float, size: int) -> int:
    """The pixel ``⌊fraction·size⌋`` of ``0..size-1`` (``fraction`` in [0, 1])."""
    return min(math.floor(fraction * size), size - 1)


def line_kernel(ksize: int, x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    """The kernel of Albumentations 0.5's ``MotionBlur`` (0.5.2's ``get_params``; 1.3.1's with
    ``allow_shifted=True`` is the same) for an odd ``ksize`` and the line's ends as fractions.

    Albumentations draws the ends' pixels uniformly: ``xs, xe = randint(0, k-1)`` twice, and
    ``ys, ye`` the same unless ``xs == xe``, when ``ys, ye = random.sample(range(k), 2)`` (two
    distinct rows, so the line is never a single pixel); it draws the line from (xs, ys) to
    (xe, ye) with ``cv2.line`` (thickness 1) and divides by its pixel count. Here the draws are the
    parameters: the first end is ``(k-1-⌊x0·k⌋, k-1-⌊y0·k⌋)`` (measured from the kernel's
    bottom-right corner), the second ``(⌊x1·k⌋, ⌊y1·k⌋)``, and where the columns coincide the
    second row is the ``⌊y1·(k-1)⌋``-th of the rows other than the first's. With the four
    fractions uniform on [0, 1] the kernel has Albumentations' distribution; at 0.5 both ends
    are the centre, and moving the four fractions to 1 stretches the line to the full diagonal.
    """
    kernel = np.zeros((ksize, ksize), dtype=np.uint8)
    xs, xe = ksize - 1 - _end(x0, ksize), _end(x1, ksize)
    ys = ksize - 1 - _end(y0, ksize)
    if xs == xe:
        other = _end(y1, ksize - 1)
        ye = other + (other >= ys)
    else:
        ye = _end(y1, ksize)
    cv2.line(kernel, (xs, ys), (xe, ye), 1, thickness=1)
    # float32 throughout, as 0.5.2 computed it under NumPy 1 (NumPy 2 would promote to float64).
    return kernel.astype(np.float32) / np.float32(kernel.sum())


#: The line's ends (fractions of the kernel; 0.5 is its centre).
_LINE_ENDS = ("x0", "y0", "x1", "y1")


@register_corruption(
    "motion_blur_line",
    source="albumentations",
    category="blur",
    params=[
        Param("ksize", 1.0, (1.0, 501.0), "kernel size in pixels (1 = identity)"),
        *(
            Param(name, 0.5, (0.0, 1.0), f"{what} of the line's {end} end, fraction of the kernel")
            for name, what, end in (
                ("x0", "column (from the right)", "first"),
                ("y0", "row (from the bottom)", "first"),
                ("x1", "column (from the left)", "second"),
                ("y1", "row (from the top)", "second"),
            )
        ),
    ],
)
def motion_blur_line(
    image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator
) -> np.ndarray:
    """Motion blur along a straight line of random position and direction in a ksize² kernel
    (Albumentations 0.5's ``MotionBlur``, the motion blur of the authors' toolbox)."""
    convolve = _functional()[1].convolve
    ends = [p[name] for name in _LINE_ENDS]
    return _odd_interpolated(image, p["ksize"], lambda x, k: convolve(x, line_kernel(k, *ends)))


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
