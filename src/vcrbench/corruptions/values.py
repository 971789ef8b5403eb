"""The checks of what a corruption is given and returns (:class:`~vcrbench.corruptions.Corruption`):
the image, the seed, a parameter's interval, and the output turned into uint8."""

from __future__ import annotations

import math

import numpy as np

from vcrbench.errors import CorruptionError


def check_image(image: np.ndarray, name: str) -> np.ndarray:
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8:
        got = type(image).__name__ if not isinstance(image, np.ndarray) else image.dtype
        raise CorruptionError(f"corruption {name!r}: expected a uint8 image, got {got}")
    if image.ndim != 3 or image.shape[2] != 3 or min(image.shape[:2]) < 1:
        raise CorruptionError(
            f"corruption {name!r}: expected an HxWx3 RGB image, got shape {image.shape}"
        )
    return np.ascontiguousarray(image)


def check_seed(seed: int, name: str) -> int:
    if isinstance(seed, bool | float) or not isinstance(seed, int | np.integer) or seed < 0:
        raise CorruptionError(
            f"corruption {name!r}: seed must be a non-negative integer, not {seed!r}"
        )
    return int(seed)


def to_uint8(out: np.ndarray, shape: tuple[int, ...], name: str) -> np.ndarray:
    out = np.asarray(out)
    if out.shape != shape:
        raise CorruptionError(
            f"corruption {name!r} returned an image of shape {out.shape}, expected {shape}"
        )
    if out.dtype == np.uint8:
        return np.ascontiguousarray(out)
    if not np.all(np.isfinite(out)):
        raise CorruptionError(f"corruption {name!r} returned non-finite pixel values")
    # Round, not truncate: truncation (imagecorruptions' np.uint8(x)) darkens by 0.5 on average
    # and turns the identity into a visible change.
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def check_interval(name: str, key: str, value, limits: tuple[float, float]) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise CorruptionError(
            f"corruption {name!r}: domain of {key!r} must be [low, high], got {value!r}"
        ) from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise CorruptionError(
            f"corruption {name!r}: domain of {key!r} must be finite with low <= high, got {value!r}"
        )
    if lo < limits[0] or hi > limits[1]:
        raise CorruptionError(
            f"corruption {name!r}: domain of {key!r} [{lo}, {hi}] leaves the parameter's valid "
            f"range [{limits[0]}, {limits[1]}]"
        )
    return (lo, hi)
