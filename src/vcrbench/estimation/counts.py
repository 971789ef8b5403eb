"""The histogram of Alg. 1: per Δv bin, the samples, the correct ones and their rate; which bins
enter the fit (``min_count``) and what the others are (``estimation.empty_bins``).

The bins themselves (``j = floor(v (M − 1))``) are :mod:`vcrbench.bins`, shared with the test sets
and the coverage table; here they are filled with outcomes (accuracy: f(x') = y; consistency:
f(x') = f(x)).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vcrbench.bins import bin_edges, bin_index
from vcrbench.errors import ShortSampleError
from vcrbench.estimation.validate import check_samples
from vcrbench.settings import EstimationSettings

#: What a bin without ``min_count`` samples is (``estimation.empty_bins``): ``skip``, missing
#: (Alg. 1's P_j = -1, bridged by the fit), or ``zero``, a rate of 0 (the VCR authors' toolbox,
#: ``utils/metric.py`` ``calculate_accs``) weighted as the mean used bin, at the bin's centre.
EMPTY_BINS = ("skip", "zero")
#: The schema's estimation settings, the default of the estimator's functions.
DEFAULT = EstimationSettings()


def bin_sums(idx: np.ndarray, dv: np.ndarray, y: np.ndarray, w: np.ndarray | None, n_bins: int):
    """Per-bin (count, correct, sum of dv), each weighted by sample multiplicities ``w``."""
    count = np.bincount(idx, weights=w, minlength=n_bins).astype(np.float64)
    correct = np.bincount(idx, weights=y if w is None else w * y, minlength=n_bins)
    sum_dv = np.bincount(idx, weights=dv if w is None else w * dv, minlength=n_bins)
    return count, correct, sum_dv


def bin_counts(dv, correct, settings: EstimationSettings = DEFAULT) -> pd.DataFrame:
    """The histogram of Alg. 1, one row per bin (all ``n_bins`` rows, empty bins included).

    Parameters
    ----------
    dv : array of Δv in [0, 1].
    correct : 0/1 or boolean outcomes (accuracy: f(x') = y; consistency: f(x') = f(x)); NaN marks
        a missing outcome (e.g. an unlabelled image for accuracy), which is dropped.
    settings : its ``bins`` (M, the number of bins) and ``min_count`` (Alg. 1's L, which sets
        the ``used`` column); :class:`~vcrbench.settings.EstimationSettings`.

    Returns
    -------
    DataFrame with columns ``bin`` (int64), ``v_lo``, ``v_hi``, ``v_center`` (bin geometry),
    ``v_mean`` (mean Δv of the bin's samples, NaN if empty), ``count``, ``correct`` (int64),
    ``rate`` (correct / count, NaN if empty) and ``used`` (count >= min_count).
    """
    samples = check_samples(dv, correct, allow_empty=True)
    n_bins = settings.bins
    idx = bin_index(samples.dv, n_bins)
    count, corr, sum_dv = bin_sums(idx, samples.dv, samples.y, None, n_bins)
    return bins_frame(count, corr, sum_dv, n_bins, settings.min_count)


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


def bins_with_data(count, corr, sum_dv, n_bins: int, min_count: int, n_samples: int):
    """The bins table (:func:`bins_frame`); :class:`ShortSampleError` where no bin holds
    ``min_count`` samples."""
    table = bins_frame(count, corr, sum_dv, n_bins, min_count)
    if not table["used"].to_numpy().any():
        raise ShortSampleError(min_count, int(count.max()), n_samples)
    return table


def zero_filled(x, count, correct, used, n_bins: int):
    """``(x, count, correct)`` of the bins with the bins not ``used`` (fewer than ``min_count``
    samples in the data) filled in as rate 0: at the bin's centre (bin ``n_bins - 1`` is v = 1),
    with the mean count of the used bins, so that each weighs as much as a typical used bin (the
    toolbox fits its bins unweighted). Bins with samples keep their own values."""
    missing = ~np.asarray(used, dtype=bool)
    if not missing.any():
        return x, count, correct
    filled = count[~missing]
    weight = float(filled.mean()) if len(filled) else 0.0
    centre = bin_edges(n_bins)[2]
    return (
        np.where(missing, centre, x),
        np.where(missing, weight, count),
        np.where(missing, 0.0, correct),
    )
