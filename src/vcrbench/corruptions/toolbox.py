"""The corruptions' variant ``toolbox``: the VCR authors' toolbox's own functions and draws.

The toolbox (GitHub HuakunShen/VCR, ``transformations.py``) made the paper's VCR sets with its own
versions of some corruptions; each is the variant ``toolbox`` of the registered corruption (config
``variant: toolbox``, :func:`~vcrbench.corruptions.registry.register_variant`), for the VCR sets
only (the ImageNet-C sets keep ImageNet-C's function):

- ``blur``, ``median_blur``, ``motion_blur_line``: odd kernel sizes only, each with the same
  probability, as Albumentations' ``random.choice`` over the odd sizes does in the toolbox (the
  output at an odd size is the registered function's, :mod:`vcrbench.corruptions.albu`);
- ``defocus_blur``: imagecorruptions' ``disk`` at the drawn radius itself, alias σ from 0;
- ``frost``: the photograph resized to the image, not cropped;
- ``glass_blur_toolbox``: ``max_delta`` an integer, ``randint(1, 10)``.

Imported by the package after the modules whose corruptions it varies (a variant needs its
corruption registered).
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Mapping
from functools import lru_cache

import cv2
import numpy as np

from vcrbench.corruptions.corruption import Param
from vcrbench.corruptions.imagenet_c import FROST_FILES, disk_kernel
from vcrbench.corruptions.registry import register_variant

# --------------------------------------------------------------------------- kernel sizes

#: Odd kernel sizes only: a discrete ``ksize`` on 1 + 2k (the toolbox's Albumentations draws).
ODD_SIZES = (1.0, 2.0)


def _register_odd_sizes(name: str, doc: str) -> None:
    """The toolbox variant of a kernel-size corruption: ``ksize`` drawn from the odd sizes only."""
    register_variant(
        name,
        "toolbox",
        description="the VCR authors' toolbox: odd kernel sizes only, each drawn with the same "
        "probability (Albumentations' random.choice)",
        params=[Param("ksize", 1.0, (1.0, 501.0), doc, grid=ODD_SIZES)],
    )


_register_odd_sizes("blur", "odd box kernel size in pixels (1 = identity)")
_register_odd_sizes("median_blur", "odd median window size in pixels (1 = identity)")
_register_odd_sizes("motion_blur_line", "odd kernel size in pixels (1 = identity)")


# --------------------------------------------------------------------------- defocus blur


#: The toolbox's alias σ grid, ``np.linspace(0, 1, 1000)``: the values k/999, 0 among them (a
#: discrete parameter, so that σ = 0 is drawn with the toolbox's probability, 1/1000 on [0, 1]).
TOOLBOX_ALIAS_GRID = (0.0, 1.0 / 999.0)


def defocus_blur_toolbox(
    image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator
) -> np.ndarray:
    """The toolbox's defocus blur: imagecorruptions' ``disk`` at the drawn radius itself (the
    grid points within a real radius; not interpolated between integer radii), anti-aliased with
    σ = alias_blur, where σ = 0 is OpenCV's σ from the kernel size (0.8 for the 3x3 of r ≤ 8)."""
    kernel = disk_kernel(float(p["radius"]), float(p["alias_blur"]))
    x = cv2.filter2D(image / 255.0, -1, kernel)
    return np.clip(x, 0, 1) * 255


register_variant(
    "defocus_blur",
    "toolbox",
    description="the VCR authors' toolbox: the disk at the drawn radius itself, alias σ from 0 "
    "(its grid linspace(0, 1), σ = 0 being OpenCV's σ from the kernel size)",
    function=defocus_blur_toolbox,
    params=[
        Param(
            "alias_blur",
            0.1,
            (0.0, 10.0),
            "σ of the anti-aliasing Gaussian, on the toolbox's grid k/999 (0: from the kernel)",
            grid=TOOLBOX_ALIAS_GRID,
        )
    ],
)


# --------------------------------------------------------------------------- glass blur


register_variant(
    "glass_blur_toolbox",
    "toolbox",
    description="the VCR authors' toolbox: max_delta an integer, each with the same probability "
    "(np.random.randint(1, 10) on the paper's domain)",
    params=[
        Param("max_delta", 0.0, (0.0, 15.0), "largest pixel displacement (integer)", grid=(0, 1))
    ],
)


# --------------------------------------------------------------------------- frost


#: The toolbox's frost draws among the first five photographs (``np.random.randint(5)``).
TOOLBOX_FROST_PHOTOGRAPHS = 5


@lru_cache(maxsize=32)
def frost_resized(index: int, height: int, width: int) -> np.ndarray:
    """The toolbox's frost layer: photograph ``index`` opened with PIL and resized to the image
    (``frost.resize((w, h))``: PIL's default filter, bicubic), then ``[..., [2, 1, 0]]``: on
    PIL's RGB(A) array that is B, G, R (ImageNet-C's step from OpenCV's BGR to RGB, applied to an
    RGB array)."""
    from PIL import Image

    ref = importlib.resources.files("imagecorruptions") / "frost" / FROST_FILES[index]
    with importlib.resources.as_file(ref) as path, Image.open(path) as photo:
        resized = photo.resize((width, height), Image.Resampling.BICUBIC)
    out = np.ascontiguousarray(np.asarray(resized)[..., [2, 1, 0]])
    out.flags.writeable = False
    return out


def frost_toolbox(
    image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator
) -> np.ndarray:
    """The toolbox's frost: the weighted sum of the image and one of the first five frost
    photographs resized to the image (no crop), its channels in the toolbox's order; clipped."""
    height, width = image.shape[:2]
    layer = frost_resized(int(rng.integers(TOOLBOX_FROST_PHOTOGRAPHS)), height, width)
    return np.clip(p["image_weight"] * image + p["frost_weight"] * layer.astype(np.float64), 0, 255)


register_variant(
    "frost",
    "toolbox",
    description="the VCR authors' toolbox: one of the first five photographs resized to the image "
    "(not cropped), channels in its order",
    function=frost_toolbox,
)
