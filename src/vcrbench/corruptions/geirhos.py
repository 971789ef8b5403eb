"""Uniform noise as Geirhos et al. (2018) defined it for their human experiment.

"We first scaled all images to a contrast level of c = 30%. Subsequently, white uniform noise of
range [−w, w] was added pixelwise … [values] out of the [0, 1] range … clipped to either 0 or 1."
The images were greyscale (scikit-image ``rgb2gray``), and contrast c maps a value v in [0, 1] to
c·v + (1 − c)/2. Their code (``image_manipulation.py`` of rgeirhos/generalisation-humans-DNNs)
draws the noise with ``uniform(low=−w, high=w)`` over the greyscale image's pixels; the result is
one grey channel, copied to RGB here (as they fed greyscale images to the networks) and rounded to
uint8. At w = 0 the image is the greyscale, 30 %-contrast one: Δv is already well above 0 there
(see the domains file), so this corruption cannot cover the smallest Δv bins by construction.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from vcrbench.corruptions.registry import Param, register_corruption

#: Contrast level of Geirhos et al.'s uniform-noise experiment.
CONTRAST = 0.3


def grey_low_contrast(image: np.ndarray, contrast: float = CONTRAST) -> np.ndarray:
    """Greyscale (scikit-image ``rgb2gray``) at ``contrast``, float on [0, 1], HxW."""
    from skimage.color import rgb2gray

    grey = rgb2gray(image / 255.0)
    return contrast * grey + (1.0 - contrast) / 2.0


@register_corruption(
    "uniform_noise",
    source="geirhos2018",
    category="noise",
    params=[Param("width", 0.0, (0.0, 10.0), "noise is U[−width, width) on the [0, 1] scale")],
    similarity_class="noise",
)
def uniform_noise(
    image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator
) -> np.ndarray:
    """Greyscale, contrast to 30 %, add U[−w, w) per pixel, clip to [0, 1]."""
    w = p["width"]
    grey = grey_low_contrast(image)
    grey = np.clip(grey + rng.uniform(-w, w, size=grey.shape), 0.0, 1.0)
    return np.repeat((grey * 255.0)[..., None], 3, axis=2)
