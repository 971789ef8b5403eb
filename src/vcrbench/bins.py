"""Alg. 1's Δv bins and Table 2's coverage criterion, the one definition every stage uses
(sampling, test sets, coverage, estimation): ``j = floor(v (M − 1))`` over M = 40 bins, so bin
M − 1 holds only v = 1.0 and the paper's coverage values are k/39; a bin is covered when it holds
at least 20 images of 50,000 (Shen et al., ECCV 2024, Appendix C and Table 2).
"""

from __future__ import annotations

import numpy as np


def as_dv(dv, what: str = "dv", *, any_shape: bool = False) -> np.ndarray:
    """Δv values as float64, checked: no NaN (a visual change is never missing) and within
    [0, 1]; one-dimensional unless ``any_shape``. ``what``: their name in an error message."""
    arr = np.asarray(dv, dtype=np.float64)
    if arr.ndim != 1 and not any_shape:
        raise ValueError(f"{what} must be one-dimensional, got shape {arr.shape}")
    nan = np.isnan(arr)
    if nan.any():
        raise ValueError(
            f"{what} has {int(nan.sum())} NaN value(s); a visual change must never be missing"
        )
    bad = (arr < 0.0) | (arr > 1.0)
    if bad.any():
        raise ValueError(
            f"{what} must lie in [0, 1]; {int(bad.sum())} value(s) do not (e.g. {arr[bad][0]!r})"
        )
    return arr


def bin_index(dv, n_bins: int) -> np.ndarray:
    """Alg. 1's bin of each Δv: ``j = floor(v (n_bins - 1))`` (int64, same shape as ``dv``);
    bin ``n_bins - 1`` holds only v = 1.0."""
    if n_bins < 2:
        raise ValueError(f"n_bins (number of bins) must be at least 2, got {n_bins}")
    arr = as_dv(dv, any_shape=True)
    return np.floor(arr * (n_bins - 1)).astype(np.int64)


def counts_per_bin(dv, n_bins: int) -> np.ndarray:
    """Samples per bin (all ``n_bins`` bins, empty ones included)."""
    return np.bincount(bin_index(dv, n_bins).ravel(), minlength=n_bins)


def scaled_min_count(n: int, base: int, base_n: int) -> int:
    """``base`` images per bin at ``base_n`` samples, scaled to ``n`` samples (at least 1)."""
    return max(1, round(base * n / base_n))


def bin_edges(n_bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(v_lo, v_hi, v_center)`` of the bins; the last bin is the single point v = 1."""
    j = np.arange(n_bins, dtype=np.float64)
    v_lo = j / (n_bins - 1)
    v_hi = np.minimum((j + 1) / (n_bins - 1), 1.0)
    return v_lo, v_hi, (v_lo + v_hi) / 2
