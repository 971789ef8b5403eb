"""The one input check of the estimator: Δv values, 0/1 outcomes, optional groups and anchors.

Every public entry point (:func:`~vcrbench.estimation.bin_counts`,
:func:`~vcrbench.estimation.fit_curve`, :func:`~vcrbench.estimation.bootstrap`,
:func:`~vcrbench.estimation.estimate`) passes its samples through :func:`check_samples`, so a bad
value is rejected with the same message wherever it enters.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pandas as pd
from threadpoolctl import ThreadpoolController

from vcrbench.bins import as_dv


@dataclasses.dataclass(frozen=True)
class Samples:
    """Checked samples with the missing outcomes dropped."""

    dv: np.ndarray  # float64 in [0, 1]
    y: np.ndarray  # float64, 0 or 1
    #: Group label of each kept sample (a pandas Series), or None.
    groups: pd.Series | None
    #: Integer codes 0..G-1 of the groups (sorted labels), or None.
    group_codes: np.ndarray | None
    n_missing: int

    @property
    def n_groups(self) -> int | None:
        return None if self.group_codes is None else int(self.group_codes.max()) + 1


def as_outcomes(values, what: str = "correct") -> np.ndarray:
    """0/1 outcomes as float64, NaN (or pandas NA/None) meaning missing (``what``: their name in
    an error message)."""
    arr = np.asarray(values)
    if arr.dtype == bool:
        return arr.astype(np.float64)
    if arr.dtype == object or isinstance(values, pd.Series | pd.api.extensions.ExtensionArray):
        arr = pd.Series(values).to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        arr = arr.astype(np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {arr.shape}")
    bad = ~np.isnan(arr) & (arr != 0.0) & (arr != 1.0)
    if bad.any():
        raise ValueError(
            f"{what} must hold 0/1 (or booleans, NaN for missing); got e.g. {arr[bad][0]!r}"
        )
    return arr


def as_groups(groups, n: int, what: str = "groups") -> np.ndarray:
    """Integer codes 0..G-1 for group labels (any hashable values)."""
    labels = pd.Series(groups)
    if len(labels) != n:
        raise ValueError(f"{what} has {len(labels)} entries, expected {n}")
    if labels.isna().any():
        raise ValueError(f"{what} has missing labels; every sample needs a group")
    codes, _ = pd.factorize(labels, sort=True)
    return codes.astype(np.int64)


def check_samples(dv, correct, groups=None, *, allow_empty: bool = False) -> Samples:
    """Check ``dv`` (in [0, 1], no NaN), ``correct`` (0/1, NaN = missing) and ``groups`` (one
    label per sample), and drop the samples whose outcome is missing.

    Raises ValueError naming what is wrong; unless ``allow_empty``, also when no outcome is left.
    """
    dv = as_dv(dv)
    y = as_outcomes(correct)
    if len(y) != len(dv):
        raise ValueError(f"dv has {len(dv)} values but correct has {len(y)}")
    keep = ~np.isnan(y)
    if not allow_empty:
        if len(y) == 0:
            raise ValueError("no observations: dv and correct are empty")
        if not keep.any():
            raise ValueError(f"no observations: all {len(y)} values of 'correct' are missing")
    labels = codes = None
    if groups is not None:
        as_groups(groups, len(y))
        labels = pd.Series(groups)[keep].reset_index(drop=True)
        codes = as_groups(labels, int(keep.sum()))
    return Samples(dv[keep], y[keep], labels, codes, int((~keep).sum()))


def sample_weights(weights, correct, what: str = "weights") -> np.ndarray | None:
    """Per-sample weights (None stays None) for the samples :func:`check_samples` keeps (those
    with an outcome): finite, non-negative, one per sample of ``correct``."""
    if weights is None:
        return None
    w = np.asarray(weights, dtype=np.float64).ravel()
    y = as_outcomes(correct)
    if len(w) != len(y):
        raise ValueError(f"{what} has {len(w)} values but correct has {len(y)}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(f"{what} must be finite and non-negative")
    return w[~np.isnan(y)]


def check_anchor(value: float, name: str) -> float:
    """A curve value (s(0) or s(1)) as a float in [0, 1]."""
    value = float(value)
    if not (0.0 <= value <= 1.0):
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return value


def fixed_anchor1(anchor1) -> float | None:
    """s(1) of a curve's settings (``EstimationSettings.anchor1``) as a float in [0, 1], or None
    (free); ``chance`` unresolved is an error (its 1/K needs the curve's label space)."""
    if anchor1 == "chance":
        raise ValueError(
            "estimation.anchor1: chance needs the label space of the curve (its 1/K): "
            "EstimationSettings.for_label_space"
        )
    return None if anchor1 is None else check_anchor(anchor1, "anchor1")


@functools.lru_cache(maxsize=1)
def _threadpools() -> ThreadpoolController:
    # Finding the loaded BLAS libraries reads /proc/self/maps (~1-15 ms); do it once.
    return ThreadpoolController()


def single_blas_thread(func):
    """Run ``func`` with one BLAS thread: the fits solve ~40x40 problems, for which BLAS threads
    only add overhead, and on a busy machine spinning threads slow them down tenfold (measured)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with _threadpools().limit(limits=1, user_api="blas"):
            return func(*args, **kwargs)

    return wrapper
