"""ImageNet-C's contrast corruption on a continuous contrast factor.

Hendrycks & Dietterich, "Benchmarking Neural Network Robustness to Common Corruptions and
Perturbations", ICLR 2019; code as in ``imagecorruptions`` (``contrast``): every channel is pulled
towards its own mean, x' = (x − mean) · c + mean on the [0, 1] scale, clipped, with c = 0.4, 0.3,
0.2, 0.1, 0.05 at severities 1-5. Unlike Geirhos et al.'s contrast (greyscale, around mid-grey
0.5), colour is kept and each channel keeps its mean.

The formula is continuous in c already: c = 1 is the identity, c → 0 a flat image of the mean
colour. As with the other ImageNet-C corruptions, the result is rounded to uint8 by the registry
where imagecorruptions truncates (``np.uint8``), at most one grey level apart.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from vcrbench.corruptions.corruption import Param
from vcrbench.corruptions.registry import register_corruption

#: The contrast factor at ImageNet-C's severities 1-5.
SEVERITIES = (0.4, 0.3, 0.2, 0.1, 0.05)


@register_corruption(
    "contrast",
    source="imagenet-c",
    category="digital",
    params=[
        Param(
            "c",
            1.0,
            (1e-4, 1.0),
            "factor on each channel's deviation from its mean (1: unchanged)",
            "log",
        )
    ],
    imagenet_c=[{"c": c} for c in SEVERITIES],
    similarity_class="contrast",
)
def contrast(image: np.ndarray, p: Mapping[str, float], rng: np.random.Generator) -> np.ndarray:
    """(x − mean) · c + mean per channel on [0, 1] (means over the whole image), clipped.

    The path is geometric (``scale="log"``): the effect is multiplicative, as ImageNet-C's factors
    (0.4 … 0.05) are.
    """
    x = np.asarray(image, dtype=np.float64) / 255.0
    means = x.mean(axis=(0, 1), keepdims=True)
    return np.clip((x - means) * p["c"] + means, 0.0, 1.0) * 255.0
