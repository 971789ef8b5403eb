"""Geirhos et al. (2018)'s low-pass manipulation, exactly as the stimuli were made.

The low-pass experiment is not one of VCR-Bench's 14 corruptions (it is Gaussian blur on the
*greyscale* image with a grey border), so it lives here. Following the authors' released
``image_manipulation.py`` (``low_pass_filter``) and the paper's supplement:

1. the RGB image in [0, 1] is converted to grey with ``skimage.color.rgb2gray``
   (0.2125 R + 0.7154 G + 0.0721 B);
2. ``scipy.ndimage.gaussian_filter(grey, σ, mode='constant', cval=0.4423)`` (truncation at the
   default four standard deviations; 0.4423 is the mean pixel value of their test images);
3. values are clipped to [0, 1] and the grey image is stacked to three channels;
4. PNG stimuli were written with ``scipy.misc.toimage(cmin=0, cmax=1)``, i.e. ``floor(255 x + ½)``.

σ = 0 is the plain greyscale image (the experiment's "original image" condition).
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import gaussian_filter
from skimage.color import rgb2gray

#: Mean pixel value of Geirhos et al.'s test images, their padding value for the filter.
GEIRHOS_MEAN_GREY = 0.4423


def to_uint8(x: np.ndarray) -> np.ndarray:
    """[0, 1] floats to uint8 as ``scipy.misc.toimage(cmin=0, cmax=1)`` did:
    ``floor(255 x + ½)``."""
    return np.floor(np.clip(x, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)


def geirhos_grey(image: np.ndarray) -> np.ndarray:
    """Greyscale of an HxWx3 uint8 image in [0, 1] (float64), as ``skimage.color.rgb2gray``."""
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"expected an HxWx3 uint8 image, got {image.dtype} {image.shape}")
    return rgb2gray(image.astype(np.float64) / 255.0)


def geirhos_lowpass(image: np.ndarray, sigma: float) -> np.ndarray:
    """Geirhos et al.'s low-pass stimulus of ``image`` (HxWx3 uint8) at filter σ (pixels).

    Returns an HxWx3 uint8 grey image (three equal channels).
    """
    sigma = float(sigma)
    if not np.isfinite(sigma) or sigma < 0:
        raise ValueError(f"low-pass sigma must be a finite number >= 0, got {sigma}")
    grey = geirhos_grey(image)
    if sigma > 0:
        grey = gaussian_filter(grey, sigma, mode="constant", cval=GEIRHOS_MEAN_GREY, truncate=4.0)
    out = to_uint8(grey)
    return np.repeat(out[..., None], 3, axis=2)
