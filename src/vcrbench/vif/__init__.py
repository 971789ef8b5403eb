"""Visual change Δv = max(0, 1 - VIF): wavelet-domain VIF, batched, on numpy or torch.

VIF is Sheikh & Bovik's (2006) visual information fidelity on a steerable pyramid, computed as
the Python port the VCR paper used computes it (Kumar, github abhinaukumar/vif, MIT,
``vif_utils.vif(ref, dist)``; variant ``"kumar"``, the default) or as Sheikh's MATLAB ``vifvec``
does (variant ``"vifvec"``). ``docs/vif.md`` gives the constants, the validation and the speed.

For a reference x and a distorted y, both greyscale on the 0-255 scale (:func:`luma`):

1. Steerable pyramid of height 4 and order 5 (pyrtools' sp5 filters, 'reflect1' edges);
   orientations 0 and 3 of every level, 8 sub-bands (``_pyramid``).
2. GSM model of each reference sub-band, distortion channel y = g x + v per 3x3 block (windows
   of 17, 9, 5, 3 samples from the finest level to the coarsest), information with HVS noise
   sigma_n^2 (``_stats``).
3. ``kumar``: sigma_n^2 = 0.1, VIF = mean_b(num_b + 1e-4) / mean_b(den_b + 1e-4) over the 8
   sub-bands b, each num_b, den_b a mean over blocks. ``vifvec``: sigma_n^2 = 0.4,
   VIF = sum_b num_b / sum_b den_b, each a sum over blocks.

Outcomes: VIF(x, x) = 1 up to ~1e-15. A flat reference has no information (num = den = 0): the
port's guard gives VIF = 1e-4 / 1e-4 = 1, i.e. Δv = 0, whatever the distortion; ``vifvec`` would
divide 0 by 0 and is defined here to give 1 as well. VIF > 1 (e.g. a contrast stretch) gives
Δv = 0. NaN or infinite pixels raise ``ValueError``; VIF itself is always finite.
"""

from __future__ import annotations

import numpy as np

from vcrbench.settings import GREY_CONVERSIONS, VifSettings

from ._backends import get_backend
from ._pyramid import HEIGHT, level_sizes, sp5_filters
from ._stats import VARIANTS, Variant, border

__all__ = [
    "GREY_CONVERSIONS",
    "LUMA_WEIGHTS",
    "OPENCV_GREY_WEIGHTS",
    "VARIANTS",
    "Variant",
    "VifSettings",
    "delta_v",
    "grey",
    "grey_uint8",
    "luma",
    "min_side",
    "vif",
]

#: BT.601 luma weights (R, G, B), applied to 0-255 values and kept in floating point.
LUMA_WEIGHTS = (0.299, 0.587, 0.114)
#: Pairs processed together by default: large enough to amortise Python overhead, small enough
#: to stay in cache (about 6 MB of working memory per pair at 224x224; 64 pairs ran 25 % slower).
BATCH_SIZE = 8


def luma(rgb) -> np.ndarray:
    """BT.601 luma ``0.299 R + 0.587 G + 0.114 B`` of uint8 RGB, on the 0-255 scale, as float64.

    Parameters
    ----------
    rgb : uint8 array (..., H, W, 3)

    Returns
    -------
    float64 array (..., H, W), not rounded (rounding to uint8 moves Δv by up to 0.02).
    """
    rgb = _check_rgb(rgb)
    from ._kernels import luma as luma_kernel

    out = np.empty(rgb.shape[:-1])
    luma_kernel(np.ascontiguousarray(rgb).reshape(-1, 3), np.array(LUMA_WEIGHTS), out.reshape(-1))
    return out


#: OpenCV's fixed-point weights of ``cvtColor(..., COLOR_RGB2GRAY)`` on uint8 (R, G, B), in units
#: of 2**-15 (``opencv/modules/imgproc/src/color.hpp``: the BT.601 weights times 32768, rounded).
OPENCV_GREY_WEIGHTS = (9798, 19235, 3735)
#: The measurement the config's defaults give (the schema's ``vif`` defaults).
DEFAULT = VifSettings()


def grey_uint8(rgb) -> np.ndarray:
    """OpenCV's ``cvtColor(rgb, COLOR_RGB2GRAY)`` of uint8 RGB, bit for bit, without OpenCV:
    ``(9798 R + 19235 G + 3735 B + 2**14) >> 15``, the luma rounded to uint8 (the VCR authors'
    generator makes its VIF inputs so).

    Parameters
    ----------
    rgb : uint8 array (..., H, W, 3)

    Returns
    -------
    uint8 array (..., H, W).
    """
    rgb = _check_rgb(rgb)
    w = np.asarray(OPENCV_GREY_WEIGHTS, dtype=np.int32)
    total = rgb.astype(np.int32) @ w
    return ((total + (1 << 14)) >> 15).astype(np.uint8)


def grey(rgb, conversion: str) -> np.ndarray:
    """Grey image of uint8 RGB on the 0-255 scale as float64, as VIF takes it: ``float``
    (:func:`luma`, not rounded) or ``uint8`` (:func:`grey_uint8`, OpenCV's rounding);
    :data:`GREY_CONVERSIONS`, ``VifSettings.grey``."""
    if conversion == "float":
        return luma(rgb)
    if conversion == "uint8":
        return grey_uint8(rgb).astype(np.float64)
    raise ValueError(f"grey conversion must be one of {list(GREY_CONVERSIONS)}, not {conversion!r}")


def _check_rgb(rgb) -> np.ndarray:
    rgb = np.asarray(rgb)
    if rgb.dtype != np.uint8:
        raise TypeError(f"rgb must be uint8 RGB (0-255), got dtype {rgb.dtype}")
    if rgb.ndim < 3 or rgb.shape[-1] != 3:
        raise ValueError(f"rgb must have shape (..., H, W, 3), got {rgb.shape}")
    return rgb


def min_side() -> int:
    """Smallest image side VIF is defined for (72 for the default pyramid).

    The port cannot go lower: pyrtools builds a level only while the image is at least as large
    as ``lofilt`` (9x9), halving it each level. (Every sub-band must also keep a block inside its
    border, which holds from 65 on.)
    """
    lo = sp5_filters()["lo"].shape[0]
    n = 1
    while not (
        all(n // 2**lv >= lo for lv in range(HEIGHT))
        and all(h // 3 - 2 * border(lv) >= 1 for lv, (h, _) in enumerate(level_sizes(n, n)))
    ):
        n += 1
    return n


def _variant(variant: str) -> Variant:
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {sorted(VARIANTS)}, got {variant!r}")
    return VARIANTS[variant]


def _as_batch(xp, a, name: str):
    """(N, H, W) or (H, W) floating-point luma -> (N, H, W) float64 on the back-end."""
    shape = tuple(a.shape) if hasattr(a, "shape") else np.shape(a)
    if len(shape) not in (2, 3):
        raise ValueError(f"{name} must have shape (H, W) or (N, H, W), got {shape}")
    if hasattr(a, "is_floating_point"):
        is_float = a.is_floating_point()
    else:
        is_float = np.issubdtype(np.asarray(a).dtype, np.floating)
    if not is_float:
        raise TypeError(f"{name} must be floating-point luma on the 0-255 scale, got {a.dtype}")
    arr = xp.asarray(a, np.float64)
    if len(shape) == 2:
        arr = arr[None]
    if not xp.isfinite_all(arr):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def vif(
    ref_luma,
    dist_luma,
    variant: str = DEFAULT.variant,
    device=None,
    batch_size: int = BATCH_SIZE,
):
    """Wavelet-domain VIF of distorted images against their references (reference FIRST).

    Parameters
    ----------
    ref_luma, dist_luma : float arrays (N, H, W) or (H, W): greyscale on the 0-255 scale (see
        :func:`luma`); numpy arrays or torch tensors. Both sides at least :func:`min_side`.
    variant : ``"kumar"`` (the port the VCR paper used) or ``"vifvec"`` (MATLAB); the default is
        the schema's ``vif.variant`` (:class:`VifSettings`).
    device : None for numpy/scipy (+ numba) on the CPU, or a torch device (``"cpu"``,
        ``"cuda"``, ``"cuda:1"`` ...).
    batch_size : pairs computed together.

    Returns
    -------
    float64 array (N,), or a float for a single (H, W) pair.
    """
    spec = _variant(variant)
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    xp = get_backend(None if device is None else str(device))
    ref = _as_batch(xp, ref_luma, "ref_luma")
    dist = _as_batch(xp, dist_luma, "dist_luma")
    if tuple(ref.shape) != tuple(dist.shape):
        raise ValueError(
            f"ref_luma and dist_luma differ in shape: {tuple(ref.shape)} vs {tuple(dist.shape)}"
        )
    if min(ref.shape[-2:]) < min_side():
        raise ValueError(
            f"images must be at least {min_side()} pixels on each side, got {tuple(ref.shape[-2:])}"
        )
    from ._stats import vif_batch

    parts = [
        xp.to_numpy(vif_batch(xp, ref[i : i + batch_size], dist[i : i + batch_size], spec))
        for i in range(0, ref.shape[0], batch_size)
    ]
    values = np.concatenate(parts).astype(np.float64) if parts else np.zeros(0)
    return float(values[0]) if len(np.shape(ref_luma)) == 2 else values


def delta_v(clean_rgb, corrupted_rgb, settings: VifSettings = DEFAULT, device=None):
    """VIF and Δv = clip(1 - VIF, 0, 1) of corrupted images against their clean originals.

    Parameters
    ----------
    clean_rgb, corrupted_rgb : uint8 arrays (N, H, W, 3) or (H, W, 3): the exact pixels the
        models see, made grey on the 0-255 scale by ``settings.grey`` (:func:`grey`: ``float``,
        BT.601 luma not rounded, :func:`luma`; ``uint8``, OpenCV's rounded grey as the VCR
        authors' generator makes it, :func:`grey_uint8`).
    settings : :class:`VifSettings`, the config's ``vif`` block (variant, grey conversion);
        default: the schema's.
    device : as in :func:`vif`.

    Returns
    -------
    (vif, dv): float64 arrays (N,), or floats for a single pair.
    """
    clean = np.asarray(clean_rgb)
    corrupted = np.asarray(corrupted_rgb)
    for name, a in (("clean_rgb", clean), ("corrupted_rgb", corrupted)):
        if a.dtype != np.uint8:
            raise TypeError(f"{name} must be uint8 RGB (0-255), got dtype {a.dtype}")
        if a.ndim not in (3, 4) or a.shape[-1] != 3:
            raise ValueError(f"{name} must have shape (H, W, 3) or (N, H, W, 3), got {a.shape}")
    if clean.shape != corrupted.shape:
        raise ValueError(
            f"clean_rgb and corrupted_rgb differ in shape: {clean.shape} vs {corrupted.shape}"
        )
    if not isinstance(settings, VifSettings):
        raise TypeError(
            f"settings must be a vcrbench.settings.VifSettings, not {type(settings).__name__}"
        )
    ref, dist = grey(clean, settings.grey), grey(corrupted, settings.grey)
    values = vif(ref, dist, variant=settings.variant, device=device)
    dv = np.clip(1.0 - np.asarray(values), 0.0, 1.0)
    if clean.ndim == 3:
        return float(values), float(dv)
    return values, dv
