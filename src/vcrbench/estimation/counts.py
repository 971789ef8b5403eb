"""The histogram of Alg. 1: per Δv bin, the samples, the correct ones and their rate.

The bins themselves (``j = floor(v (M − 1))``) are :mod:`vcrbench.bins`, shared with the test sets
and the coverage table; here they are filled with outcomes (accuracy: f(x') = y; consistency:
f(x') = f(x)).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vcrbench.bins import bin_edges, bin_index
from vcrbench.estimation.validate import check_samples
from vcrbench.vocab import COVERAGE_MIN_COUNT, N_BINS

#: Minimum samples in a bin for its rate to enter the fit (Alg. 1's L). 20 is the paper's coverage
#: criterion (Table 2), so the bins that enter the fit are exactly the "covered" bins.
DEFAULT_MIN_COUNT = COVERAGE_MIN_COUNT


def bin_sums(idx: np.ndarray, dv: np.ndarray, y: np.ndarray, w: np.ndarray | None, n_bins: int):
    """Per-bin (count, correct, sum of dv), each weighted by sample multiplicities ``w``."""
    count = np.bincount(idx, weights=w, minlength=n_bins).astype(np.float64)
    correct = np.bincount(idx, weights=y if w is None else w * y, minlength=n_bins)
    sum_dv = np.bincount(idx, weights=dv if w is None else w * dv, minlength=n_bins)
    return count, correct, sum_dv


def bin_counts(
    dv, correct, n_bins: int = N_BINS, *, min_count: int = DEFAULT_MIN_COUNT
) -> pd.DataFrame:
    """The histogram of Alg. 1, one row per bin (all ``n_bins`` rows, empty bins included).

    Parameters
    ----------
    dv : array of Δv in [0, 1].
    correct : 0/1 or boolean outcomes (accuracy: f(x') = y; consistency: f(x') = f(x)); NaN marks
        a missing outcome (e.g. an unlabelled image for accuracy), which is dropped.
    n_bins : M, the number of bins.
    min_count : Alg. 1's L; sets the ``used`` column.

    Returns
    -------
    DataFrame with columns ``bin`` (int64), ``v_lo``, ``v_hi``, ``v_center`` (bin geometry),
    ``v_mean`` (mean Δv of the bin's samples, NaN if empty), ``count``, ``correct`` (int64),
    ``rate`` (correct / count, NaN if empty) and ``used`` (count >= min_count).
    """
    samples = check_samples(dv, correct, allow_empty=True)
    idx = bin_index(samples.dv, n_bins)
    count, corr, sum_dv = bin_sums(idx, samples.dv, samples.y, None, n_bins)
    return bins_frame(count, corr, sum_dv, n_bins, min_count)


def bins_frame(count, correct, sum_dv, n_bins: int, min_count: int) -> pd.DataFrame:
    """The bins table from per-bin sums (as :func:`bin_sums` gives them)."""
    v_lo, v_hi, v_center = bin_edges(n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        v_mean = np.where(count > 0, sum_dv / count, np.nan)
        rate = np.where(count > 0, correct / count, np.nan)
    return pd.DataFrame(
        {
            "bin": np.arange(n_bins, dtype=np.int64),
            "v_lo": v_lo,
            "v_hi": v_hi,
            "v_center": v_center,
            "v_mean": v_mean,
            "count": np.rint(count).astype(np.int64),
            "correct": np.rint(correct).astype(np.int64),
            "rate": rate,
            "used": count >= max(int(min_count), 1),
        }
    )
