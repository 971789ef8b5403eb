"""The checks of what a corruption is given and returns (:class:`~vcrbench.corruptions.Corruption`):
the image, the seed, a parameter's interval, and the output turned into uint8 (rounded, or
truncated as the VCR authors' toolbox and ImageNet-C's generator cast: :data:`CASTS`)."""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator

import numpy as np

from vcrbench.errors import CorruptionError
from vcrbench.vocab import CASTS, DEFAULT_CAST


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


# How a corruption's float output becomes uint8 (vocab.CASTS; ``sampling.cast``, or a
# corruption's ``cast``): ``round`` (the project's default) or ``truncate`` (``np.uint8(x)`` of
# values in [0, 255], as the VCR authors' toolbox casts every corrupted image,
# ``transformations.py`` and ``imagegen/generator.py``, and as ImageNet-C's
# ``make_imagenet_c.py`` saves its files).
_CAST: contextvars.ContextVar[str] = contextvars.ContextVar("vcrbench_cast", default=DEFAULT_CAST)


def check_cast(cast, name: str) -> str:
    if cast not in CASTS:
        raise CorruptionError(
            f"corruption {name!r}: cast must be one of {list(CASTS)}, not {cast!r}"
        )
    return cast


@contextlib.contextmanager
def casting(cast: str) -> Iterator[None]:
    """Within the block, :func:`cast_uint8` (a corruption's intermediate uint8 images, e.g. glass
    blur's, and its output) casts by ``cast``."""
    token = _CAST.set(check_cast(cast, "?"))
    try:
        yield
    finally:
        _CAST.reset(token)


def cast_uint8(x: np.ndarray, cast: str | None = None) -> np.ndarray:
    """Float pixel values on the 0-255 scale as uint8, clipped to [0, 255]: rounded to the nearest
    level, or truncated (floored) as ``np.uint8`` does; ``cast`` None: the one :func:`casting`
    set (rounding outside it)."""
    clipped = np.clip(x, 0, 255)
    if (cast or _CAST.get()) == "truncate":
        return clipped.astype(np.uint8)
    return np.rint(clipped).astype(np.uint8)


def to_uint8(
    out: np.ndarray, shape: tuple[int, ...], name: str, cast: str | None = None
) -> np.ndarray:
    out = np.asarray(out)
    if out.shape != shape:
        raise CorruptionError(
            f"corruption {name!r} returned an image of shape {out.shape}, expected {shape}"
        )
    if out.dtype == np.uint8:
        return np.ascontiguousarray(out)
    if not np.all(np.isfinite(out)):
        raise CorruptionError(f"corruption {name!r} returned non-finite pixel values")
    # Round by default, not truncate: truncation (imagecorruptions' np.uint8(x)) darkens by 0.5
    # on average and turns the identity into a visible change; cast="truncate" does it anyway
    # (the authors' pipelines did).
    return cast_uint8(out, cast)


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
