"""Bootstrap uncertainty of a curve: replicate curves from resampled samples or groups, and
the percentile intervals and bands built from them.

Each replicate resamples the units with replacement (samples, or whole groups such as images or
participants: a cluster bootstrap), rebuilds the bins and refits, either choosing the penalty anew
by cross-validation on the resample (``n_folds``: the interval then carries the uncertainty of
that choice) or with the penalty chosen on the full data. Clean outcomes behind the anchor s(0) are
resampled too, jointly with the samples of the same group.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from vcrbench.bins import bin_index
from vcrbench.estimation.counts import DEFAULT, bin_sums, zero_filled
from vcrbench.estimation.quantile import QUANTILE_LAMBDA_GRID
from vcrbench.estimation.spline import (
    LAMBDA_GRID,
    SPLINES,
    _basis,
    _curve_values,
    _fit_bins,
    _folds,
    _select_lambda,
    _select_lambda_sic,
)
from vcrbench.estimation.validate import (
    as_outcomes,
    check_anchor,
    check_samples,
    fixed_anchor1,
    single_blas_thread,
)
from vcrbench.settings import EstimationSettings

DEFAULT_LEVEL = 0.95


def _multiplicities(n: int, rng: np.random.Generator) -> np.ndarray:
    """How often each of n units is drawn in one resample of size n with replacement."""
    return np.bincount(rng.integers(0, n, n), minlength=n).astype(np.float64)


def prepare_anchor(anchor0, anchor_groups):
    """(point value, outcomes or None, anchor group codes or None) from a float or outcomes."""
    if np.ndim(anchor0) == 0:
        if anchor_groups is not None:
            raise ValueError("anchor_groups given but anchor0 is a number, not clean outcomes")
        return check_anchor(anchor0, "anchor0"), None
    out = as_outcomes(anchor0, "anchor0")
    keep = ~np.isnan(out)
    if not keep.any():
        raise ValueError("anchor0: all clean outcomes are missing")
    labels = None
    if anchor_groups is not None:
        labels = pd.Series(anchor_groups)
        if len(labels) != len(out):
            raise ValueError(f"anchor_groups has {len(labels)} entries, anchor0 has {len(out)}")
        if labels.isna().any():
            raise ValueError("anchor_groups has missing labels")
        labels = labels[keep].reset_index(drop=True)
    out = out[keep]
    return float(out.mean()), (out, labels)


def replicate_curves(
    idx: np.ndarray,
    dv: np.ndarray,
    y: np.ndarray,
    anchor0: float,
    anchor_data,
    groups,
    settings: EstimationSettings,
    *,
    used: np.ndarray,
    lam: float,
    anchor1: float | None,
    rng: np.random.Generator,
    progress: bool | None,
    reselect: bool,
    weights: np.ndarray | None = None,
    anchor_weights: np.ndarray | None = None,
) -> np.ndarray:
    """``settings.n_boot`` replicate curves (see :func:`bootstrap`) of the ``settings.spline``
    fit over ``settings.bins`` bins; ``reselect``: choose the penalty per replicate (P-spline: by
    ``settings.n_folds``-fold CV on the resample, folds holding whole units; quantile spline: by
    SIC on the resample's bins), else keep ``lam``. ``anchor1``: s(1), checked.
    ``weights``/``anchor_weights``: fixed weights of the samples and of the clean outcomes,
    multiplied into each resample's multiplicities (None: 1 each)."""
    n_bins, n_boot, spline = settings.bins, int(settings.n_boot), settings.spline
    n_folds = settings.n_folds if reselect else None
    basis = _basis(n_bins - 1, settings.grid_size, SPLINES[spline])
    out = np.empty((n_boot, len(basis.grid)), dtype=np.float32)
    anchor_out = None if anchor_data is None else anchor_data[0]
    anchor_labels = None if anchor_data is None else anchor_data[1]
    n = len(y)
    sample_codes, anchor_codes, n_units = _unit_codes(groups, anchor_labels, n)
    for b in tqdm(range(n_boot), desc="bootstrap", disable=progress is not True, leave=False):
        if sample_codes is not None:
            unit_mult = _multiplicities(n_units, rng)
            w = unit_mult[sample_codes]
        else:
            unit_mult = None
            w = _multiplicities(n, rng)
        if weights is not None:
            w = w * weights
        a0 = anchor0
        if anchor_out is not None:
            a0 = _replicate_anchor(
                anchor0, anchor_out, anchor_codes, unit_mult, anchor_weights, anchor1, rng
            )
        lam_b = lam
        count, corr, sum_dv = bin_sums(idx, dv, y, w, n_bins)
        count = np.where(used, count, 0.0)
        x = np.divide(sum_dv, count, out=np.zeros(n_bins), where=count > 0)
        if settings.empty_bins == "zero":  # bins missing in the data, filled as the point curve's
            x, count, corr = zero_filled(x, count, corr, used, n_bins)
        if n_folds is not None and spline == "quantile":
            grid = _candidates(lam, QUANTILE_LAMBDA_GRID)
            lam_b = _select_lambda_sic(basis, x, count, corr, a0, anchor1, grid)[0]
        elif n_folds is not None:
            lam_b = _replicate_lambda(
                basis, idx, dv, y, w, unit_mult if unit_mult is not None else w, sample_codes,
                used, a0, anchor1, n_folds, n_bins, rng, lam,
            )  # fmt: skip
        coef = _fit_bins(basis, x, count, corr, lam_b, a0, anchor1, spline=spline)
        out[b] = _curve_values(basis, coef)
    return out


def _unit_codes(groups, anchor_labels, n: int):
    """``(unit of each sample or None, unit of each clean outcome or None, number of units)``:
    groups of samples and of clean outcomes are coded together, so that they are resampled
    jointly (one draw of participants); without groups every sample is a unit."""
    sample_codes = anchor_codes = None
    n_units = n
    if groups is not None:
        labels = pd.Series(groups).reset_index(drop=True)
        if anchor_labels is not None:
            codes, uniques = pd.factorize(pd.concat([labels, anchor_labels]), sort=True)
            sample_codes, anchor_codes = codes[:n], codes[n:]
        else:
            codes, uniques = pd.factorize(labels, sort=True)
            sample_codes = codes
        n_units = len(uniques)
    elif anchor_labels is not None:
        anchor_codes = pd.factorize(anchor_labels, sort=True)[0]
    return sample_codes, anchor_codes, n_units


def _replicate_anchor(anchor0, anchor_out, anchor_codes, unit_mult, anchor_weights, anchor1, rng):
    """s(0) of one replicate: the (weighted) mean of the resampled clean outcomes, drawn with
    the samples' units where they share them, else on their own."""
    if anchor_codes is not None and unit_mult is not None:
        aw = unit_mult[anchor_codes]
    elif anchor_codes is not None:
        aw = _multiplicities(int(anchor_codes.max()) + 1, rng)[anchor_codes]
    else:
        aw = _multiplicities(len(anchor_out), rng)
    if anchor_weights is not None:
        aw = aw * anchor_weights
    # A draw with no clean outcome at all keeps the point anchor.
    a0 = float(aw @ anchor_out / aw.sum()) if aw.sum() > 0 else anchor0
    if anchor1 is not None:
        a0 = max(a0, anchor1)
    return a0


def _replicate_lambda(
    basis, idx, dv, y, w, unit_mult, sample_codes, used, a0, anchor1, n_folds, n_bins, rng, lam
) -> float:
    """The penalty cross-validation chooses on one resample: the drawn units (images, observers
    or samples) are dealt into ``n_folds`` folds, every copy of a unit in the same fold, so that a
    unit drawn twice never sits on both sides of a split."""
    drawn = unit_mult > 0
    if sample_codes is not None:  # units that hold only clean outcomes have nothing to fold
        has_samples = np.zeros(len(unit_mult), dtype=bool)
        has_samples[sample_codes] = True
        drawn &= has_samples
    drawn = np.flatnonzero(drawn)
    k = min(int(n_folds), len(drawn))
    if k < 2:
        return lam
    unit_fold = np.full(len(unit_mult), -1, dtype=np.int64)
    unit_fold[drawn] = _folds(len(drawn), k, rng)
    fold = unit_fold if sample_codes is None else unit_fold[sample_codes]
    keep = fold >= 0
    chosen, _ = _select_lambda(
        basis, idx[keep], dv[keep], y[keep], fold[keep], used, a0, anchor1,
        _candidates(lam), n_bins, w[keep],
    )  # fmt: skip
    return chosen


#: Candidates a replicate's cross-validation tries: the full data's penalty and this many steps of
#: :data:`LAMBDA_GRID` (half decades) on either side of it.
RESELECT_STEPS = 3


def _candidates(lam: float, grid: tuple[float, ...] = LAMBDA_GRID) -> tuple[float, ...]:
    """``grid`` within :data:`RESELECT_STEPS` steps of ``lam`` (a window of three decades: the
    choices replicates make lie there, and the search costs a third of the grid's)."""
    at = int(np.argmin(np.abs(np.log10(grid) - np.log10(lam))))
    return grid[max(0, at - RESELECT_STEPS) : at + RESELECT_STEPS + 1]


def reselects(settings: EstimationSettings) -> bool:
    """Whether bootstrap replicates re-choose the penalty: where the point curve chose it (no
    fixed ``lam``) and ``bootstrap_penalty`` is ``reselect``."""
    return settings.lam is None and settings.bootstrap_penalty == "reselect"


@single_blas_thread
def bootstrap(
    dv,
    correct,
    anchor0,
    settings: EstimationSettings = DEFAULT,
    *,
    lam: float,
    seed: int,
    groups=None,
    anchor_groups=None,
    progress: bool | None = None,
) -> np.ndarray:
    """Bootstrap replicate curves, shape ``(settings.n_boot, settings.grid_size)``, float32.

    Each replicate resamples the samples with replacement (or, with ``groups``, whole groups such
    as images or participants: a cluster bootstrap), rebuilds the bins and refits with the fixed
    penalty ``lam`` (normally the one the full data's fit chose), or, where the settings re-choose
    it (:func:`reselects`: no fixed ``settings.lam`` and ``bootstrap_penalty`` ``reselect``), with
    the penalty ``settings.n_folds``-fold cross-validation (the quantile spline: SIC) chooses on
    the resample. The bins that enter the fit are those with at least ``settings.min_count``
    samples in the full data. If ``anchor0`` is an array of clean 0/1 outcomes rather than a
    number, the anchor is resampled too (jointly with the samples' groups when ``anchor_groups``
    is given). ``settings.empty_bins`` ``zero`` fills the bins under ``min_count`` in the full
    data with rate 0 in every replicate (:func:`~vcrbench.estimation.counts.zero_filled`). Same
    arguments and seed, same result.
    """
    samples = check_samples(dv, correct, groups)
    dv, y, groups = samples.dv, samples.y, samples.groups
    a0, anchor_data = prepare_anchor(anchor0, anchor_groups)
    n_bins = settings.bins
    idx = bin_index(dv, n_bins)
    count, _, _ = bin_sums(idx, dv, y, None, n_bins)
    used = count >= max(int(settings.min_count), 1)
    rng = np.random.Generator(np.random.PCG64(seed))
    return replicate_curves(
        idx, dv, y, a0, anchor_data, groups, settings, used=used, lam=float(lam),
        anchor1=fixed_anchor1(settings.anchor1), rng=rng, progress=progress,
        reselect=reselects(settings),
    )  # fmt: skip


def small_sample_factor(n_units: int, level: float) -> float:
    """How much to widen bootstrap deviations when few units are resampled.

    The bootstrap variance over G resampled units (images, observers) is biased low by
    (G − 1)/G, and a ratio of an estimate to its estimated error is closer to Student's t with
    G − 1 degrees of freedom than to the normal: the two small-sample corrections of
    cluster-robust inference (Cameron & Miller 2015, J. Human Resources 50(2), §VI). The factor is
    ``sqrt(G / (G − 1)) · t_{G−1, (1+level)/2} / z_{(1+level)/2}``: 1.217 for the default run's
    10 images at 95%, 1.007 for 240 samples, 1.0008 for 2,000; 1 below 2 units.
    """
    # The quantiles as scipy.stats' t.ppf and norm.ppf compute them (stdtrit, ndtri), without
    # importing scipy.stats (most of a second per job).
    from scipy.special import ndtri, stdtrit

    g = int(n_units)
    if g < 2:
        return 1.0
    q = (1 + float(level)) / 2
    return float(np.sqrt(g / (g - 1)) * stdtrit(g - 1, q) / ndtri(q))


def widen(replicates: np.ndarray, center: np.ndarray, factor: float) -> np.ndarray:
    """Replicate curves moved ``factor`` times as far from ``center`` (the point curve), within
    [0, 1] and non-increasing, in the replicates' dtype (``factor`` 1: unchanged)."""
    if factor == 1.0 or len(replicates) == 0:
        return replicates
    reps = np.asarray(replicates, dtype=np.float64)
    out = np.clip(center + factor * (reps - center), 0.0, 1.0)
    return np.minimum.accumulate(out, axis=1).astype(replicates.dtype)


def percentile_interval(x: np.ndarray, level: float) -> tuple:
    """Percentile bounds ``((1 - level) / 2, (1 + level) / 2)`` along axis 0 (NaN if empty)."""
    if not (0 < level < 1):
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    if len(x) == 0:
        shape = x.shape[1:]
        return np.full(shape, np.nan), np.full(shape, np.nan)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(np.asarray(x, dtype=np.float64), [alpha, 1 - alpha], axis=0)
    return lo, hi


def simultaneous_band(
    replicates: np.ndarray, center: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """A sup-t band: ``center ± c · sd`` with ``sd`` the replicates' pointwise standard deviation
    and ``c`` the ``level`` quantile of ``max_v |replicate - center| / sd`` over replicates, so
    that a ``level`` share of whole replicate curves lies inside (Montiel Olea & Plagborg-Møller
    2019). Clipped to [0, 1]; NaN without replicates.
    """
    reps = np.asarray(replicates, dtype=np.float64)
    center = np.asarray(center, dtype=np.float64)
    if len(reps) == 0:
        nan = np.full(center.shape, np.nan)
        return nan, nan.copy()
    percentile_interval(reps[:1], level)  # validates level
    sd = reps.std(axis=0)
    # Where every replicate agrees (a fixed anchor) the band has no width; elsewhere scale by sd.
    scale = np.where(sd > 1e-12, sd, np.inf)
    t = np.max(np.abs(reps - center) / scale, axis=1)
    c = float(np.quantile(t, level))
    return np.clip(center - c * sd, 0.0, 1.0), np.clip(center + c * sd, 0.0, 1.0)
