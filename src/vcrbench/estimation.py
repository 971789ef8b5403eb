"""VCR estimation (Alg. 1 of the VCR paper): Δv bins, an anchored monotone smoothing spline, its
area R̂, and bootstrap uncertainty.

The pieces, in the order the workflow uses them:

- :func:`bin_index` / :func:`bin_counts`: the M = 40 Δv bins of Alg. 1, ``j = floor(v (M - 1))``
  (so bin M - 1 holds only v = 1.0), with counts, correct counts and rates.
- :func:`fit_curve`: a penalised cubic B-spline (P-spline) fitted by weighted least squares to the
  bin rates of the bins with at least ``min_count`` samples, constrained to be non-increasing, to
  start at the anchor ``s(0) = anchor0`` and to stay within [0, 1]; the penalty is chosen by K-fold
  cross-validation of the held-out Brier score. The constrained fit is a small quadratic programme,
  solved exactly as a least-distance problem with :func:`scipy.optimize.nnls` (Lawson & Hanson).
- :func:`area`: R̂ = ∫₀¹ s(v) w(v) dv on a fixed grid of 1001 points, w = 1 unless a weighting is
  given (normalised so that ∫ w = 1).
- :func:`bootstrap` and :func:`estimate`: replicate curves from resampled samples (or resampled
  groups, e.g. participants), pointwise percentile bands, percentile intervals for R̂, collected in
  an :class:`Estimate` that round-trips through Parquet-ready tables.

``docs/estimation.md`` gives the reasons for every choice and the measured accuracy and speed.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy.interpolate import BSpline
from scipy.linalg import get_lapack_funcs, solve_triangular
from scipy.optimize import nnls
from threadpoolctl import ThreadpoolController
from tqdm.auto import tqdm

#: Alg. 1's visual-change resolution M.
N_BINS = 40
#: Minimum samples in a bin for its rate to enter the fit (Alg. 1's L). 20 is the paper's coverage
#: criterion (Table 2), so the bins that enter the fit are exactly the "covered" bins.
DEFAULT_MIN_COUNT = 20
#: Points of the evaluation grid over [0, 1] (step 0.001); every area is computed on it.
GRID_SIZE = 1001
#: Cubic B-splines with knots at the bin edges j / (M - 1).
SPLINE_DEGREE = 3
#: Candidate penalties (weights are normalised to sum to 1): 10^-8 … 10^2 in half decades.
LAMBDA_GRID = tuple(float(10.0**e) for e in np.arange(-8.0, 2.01, 0.5))
DEFAULT_N_FOLDS = 5
DEFAULT_N_BOOT = 200
DEFAULT_LEVEL = 0.95
#: A tiny first-difference ridge that keeps the least-squares matrix of full rank when data are
#: sparse; its effect on a fitted curve is far below 1e-6.
_RIDGE = 1e-9
_GEQRF = get_lapack_funcs("geqrf", (np.zeros((2, 2)),))

Weighting = str | Callable[[np.ndarray], np.ndarray] | np.ndarray | None


# --------------------------------------------------------------------------------------- input checks


def _as_dv(dv, name: str = "dv", *, any_shape: bool = False) -> np.ndarray:
    arr = np.asarray(dv, dtype=np.float64)
    if arr.ndim != 1 and not any_shape:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    nan = np.isnan(arr)
    if nan.any():
        raise ValueError(
            f"{name} has {int(nan.sum())} NaN value(s); a visual change must never be missing"
        )
    bad = (arr < 0.0) | (arr > 1.0)
    if bad.any():
        raise ValueError(
            f"{name} must lie in [0, 1]; {int(bad.sum())} value(s) do not (e.g. {arr[bad][0]!r})"
        )
    return arr


def _as_outcomes(values, name: str = "correct") -> np.ndarray:
    """0/1 outcomes as float64, NaN (or pandas NA/None) meaning missing."""
    arr = np.asarray(values)
    if arr.dtype == bool:
        return arr.astype(np.float64)
    if arr.dtype == object or isinstance(values, pd.Series | pd.api.extensions.ExtensionArray):
        arr = pd.Series(values).to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        arr = arr.astype(np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    bad = ~np.isnan(arr) & (arr != 0.0) & (arr != 1.0)
    if bad.any():
        raise ValueError(
            f"{name} must hold 0/1 (or booleans, NaN for missing); got e.g. {arr[bad][0]!r}"
        )
    return arr


def _as_groups(groups, n: int, name: str = "groups") -> np.ndarray:
    """Integer codes 0..G-1 for group labels (any hashable values)."""
    labels = pd.Series(groups)
    if len(labels) != n:
        raise ValueError(f"{name} has {len(labels)} entries, expected {n}")
    if labels.isna().any():
        raise ValueError(f"{name} has missing labels; every sample needs a group")
    codes, _ = pd.factorize(labels, sort=True)
    return codes.astype(np.int64)


def _check_anchor(value: float, name: str) -> float:
    value = float(value)
    if not (0.0 <= value <= 1.0):
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return value


@functools.lru_cache(maxsize=1)
def _threadpools() -> ThreadpoolController:
    # Finding the loaded BLAS libraries reads /proc/self/maps (~1-15 ms); do it once.
    return ThreadpoolController()


def _single_blas_thread(func):
    """Run ``func`` with one BLAS thread: the fits solve ~40x40 problems, for which BLAS threads
    only add overhead, and on a busy machine spinning threads slow them down tenfold (measured)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with _threadpools().limit(limits=1, user_api="blas"):
            return func(*args, **kwargs)

    return wrapper


# ----------------------------------------------------------------------------------------------- bins


def bin_index(dv, M: int = N_BINS) -> np.ndarray:
    """Alg. 1's bin of each Δv: ``j = floor(v (M - 1))`` (int64, same shape as ``dv``); bin M - 1
    holds only v = 1.0."""
    if M < 2:
        raise ValueError(f"M (number of bins) must be at least 2, got {M}")
    arr = _as_dv(dv, any_shape=True)
    return np.floor(arr * (M - 1)).astype(np.int64)


def bin_edges(M: int = N_BINS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(v_lo, v_hi, v_center)`` of the M bins; the last bin is the single point v = 1."""
    j = np.arange(M, dtype=np.float64)
    v_lo = j / (M - 1)
    v_hi = np.minimum((j + 1) / (M - 1), 1.0)
    return v_lo, v_hi, (v_lo + v_hi) / 2


def _bin_sums(idx: np.ndarray, dv: np.ndarray, y: np.ndarray, w: np.ndarray | None, M: int):
    """Per-bin (count, correct, sum of dv), each weighted by sample multiplicities ``w``."""
    count = np.bincount(idx, weights=w, minlength=M).astype(np.float64)
    correct = np.bincount(idx, weights=y if w is None else w * y, minlength=M)
    sum_dv = np.bincount(idx, weights=dv if w is None else w * dv, minlength=M)
    return count, correct, sum_dv


def bin_counts(dv, correct, M: int = N_BINS, *, min_count: int = DEFAULT_MIN_COUNT) -> pd.DataFrame:
    """The histogram of Alg. 1, one row per bin (all M rows, empty bins included).

    Parameters
    ----------
    dv : array of Δv in [0, 1].
    correct : 0/1 or boolean outcomes (accuracy: f(x') = y; consistency: f(x') = f(x)); NaN marks
        a missing outcome (e.g. an unlabelled image for accuracy), which is dropped.
    M : number of bins.
    min_count : Alg. 1's L; sets the ``used`` column.

    Returns
    -------
    DataFrame with columns ``bin`` (int64), ``v_lo``, ``v_hi``, ``v_center`` (bin geometry),
    ``v_mean`` (mean Δv of the bin's samples, NaN if empty), ``count``, ``correct`` (int64),
    ``rate`` (correct / count, NaN if empty) and ``used`` (count >= min_count).
    """
    dv = _as_dv(dv)
    y = _as_outcomes(correct)
    if len(y) != len(dv):
        raise ValueError(f"dv has {len(dv)} values but correct has {len(y)}")
    keep = ~np.isnan(y)
    dv, y = dv[keep], y[keep]
    idx = bin_index(dv, M)
    count, corr, sum_dv = _bin_sums(idx, dv, y, None, M)
    return _bins_frame(count, corr, sum_dv, M, min_count)


def _bins_frame(count, correct, sum_dv, M: int, min_count: int) -> pd.DataFrame:
    v_lo, v_hi, v_center = bin_edges(M)
    with np.errstate(invalid="ignore", divide="ignore"):
        v_mean = np.where(count > 0, sum_dv / count, np.nan)
        rate = np.where(count > 0, correct / count, np.nan)
    return pd.DataFrame(
        {
            "bin": np.arange(M, dtype=np.int64),
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


# -------------------------------------------------------------------------------------------- basis


@dataclasses.dataclass(frozen=True, eq=False)
class _Basis:
    """Cubic B-spline basis on [0, 1] with the fixed matrices every fit reuses."""

    knots: np.ndarray
    degree: int
    grid: np.ndarray
    grid_design: np.ndarray  # (G, n_basis)
    D2: np.ndarray  # second differences, the roughness penalty
    D1: np.ndarray  # first differences, the tiny ridge
    monotone: np.ndarray  # rows c_k - c_{k+1} >= 0, then c_last >= 0

    @property
    def n_basis(self) -> int:
        return len(self.knots) - self.degree - 1

    def design(self, x: np.ndarray) -> np.ndarray:
        if len(x) == 0:
            return np.zeros((0, self.n_basis))
        return BSpline.design_matrix(x, self.knots, self.degree).toarray()


@functools.lru_cache(maxsize=16)
def _basis(n_segments: int, grid_size: int = GRID_SIZE, degree: int = SPLINE_DEGREE) -> _Basis:
    inner = np.linspace(0.0, 1.0, n_segments + 1)
    knots = np.r_[np.zeros(degree), inner, np.ones(degree)]
    n = len(knots) - degree - 1
    grid = np.linspace(0.0, 1.0, grid_size)
    grid_design = BSpline.design_matrix(grid, knots, degree).toarray()
    eye = np.eye(n)
    D1 = np.diff(eye, n=1, axis=0)
    # Second divided differences at the Greville abscissae, scaled by h^2 (h = knot spacing):
    # ordinary second differences inside, but corrected near the clamped ends so that the penalty
    # vanishes exactly on straight lines (plain differences would bend a line near v = 0 and 1).
    greville = np.array([knots[k + 1 : k + degree + 1].mean() for k in range(n)])
    slopes = D1 / np.diff(greville)[:, None]
    D2 = np.diff(slopes, axis=0) / ((greville[2:] - greville[:-2]) / 2)[:, None]
    D2 *= (1.0 / n_segments) ** 2
    last = np.zeros((1, n))
    last[0, -1] = 1.0
    monotone = np.vstack([-D1, last])
    for arr in (knots, grid, grid_design, D1, D2, monotone):
        arr.setflags(write=False)
    return _Basis(knots, degree, grid, grid_design, D2, D1, monotone)


def default_grid(grid_size: int = GRID_SIZE) -> np.ndarray:
    """The evaluation grid over [0, 1] shared by every curve (read-only)."""
    return _basis(N_BINS - 1, grid_size).grid


# ------------------------------------------------------------------------------------------- solver


def _lsi(C: np.ndarray, d: np.ndarray, G: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Minimise ||C x - d|| subject to G x >= h (C of full column rank), exactly.

    Lawson & Hanson (1974, ch. 23): with C = QR, z = R x - Qᵀd turns the problem into the
    least-distance problem min ||z|| s.t. (G R⁻¹) z >= h - G R⁻¹ Qᵀ d, whose solution is read off
    one non-negative least-squares problem. This is the same reduction SLSQP uses internally; we
    call it directly because scipy has no QP solver and the problem is tiny (about 41 unknowns).
    """
    n = C.shape[1]
    # QR of [C | d]: its R holds R and Qᵀd in its last column, without forming Q.
    qr, _, _, info = _GEQRF(np.column_stack([C, d]), overwrite_a=True)
    if info != 0:
        raise RuntimeError(f"monotone spline fit: QR factorisation failed (LAPACK info {info})")
    R = np.triu(qr[:n, :n])
    qtd = qr[:n, n]
    if len(h) == 0:
        return solve_triangular(R, qtd, check_finite=False)
    Rinv = solve_triangular(R, np.eye(n), check_finite=False)
    A = G @ Rinv
    b = h - A @ qtd
    E = np.vstack([A.T, b[None, :]])
    f = np.zeros(n + 1)
    f[-1] = 1.0
    u, _ = nnls(E, f, maxiter=50 * E.shape[1])
    r = E @ u - f
    if abs(r[-1]) < 1e-14:
        raise RuntimeError("monotone spline fit: constraints are infeasible")
    z = -r[:n] / r[-1]
    return Rinv @ (z + qtd)


@dataclasses.dataclass(frozen=True, eq=False)
class _Setup:
    """The parts of the constrained problem that depend only on the penalty and the anchors."""

    free: np.ndarray  # indices of the coefficients that are fitted
    fixed: np.ndarray  # indices pinned by the anchors (0, and the last with anchor1)
    pen_free: np.ndarray  # penalty rows [sqrt(lam) D2; sqrt(ridge) D1], free columns
    pen_fixed: np.ndarray  # the same rows, fixed columns
    G: np.ndarray  # constraints G x >= h - G_fixed @ anchors on the free coefficients
    G_fixed: np.ndarray


@functools.lru_cache(maxsize=512)
def _setup(basis: _Basis, lam: float, pinned_end: bool) -> _Setup:
    n = basis.n_basis
    fixed = np.array([0, n - 1] if pinned_end else [0])
    free = np.setdiff1d(np.arange(n), fixed)
    pen = np.vstack([math.sqrt(lam) * basis.D2, math.sqrt(_RIDGE) * basis.D1])
    G = basis.monotone[:, free]
    rows = np.abs(G).sum(axis=1) > 0  # rows on pinned coefficients only hold by construction
    return _Setup(
        free=free,
        fixed=fixed,
        pen_free=pen[:, free],
        pen_fixed=pen[:, fixed],
        G=G[rows],
        G_fixed=basis.monotone[rows][:, fixed],
    )


def _solve(
    basis: _Basis,
    Bx: np.ndarray,
    rate: np.ndarray,
    weight: np.ndarray,
    lam: float,
    anchor0: float,
    anchor1: float | None,
) -> np.ndarray:
    """Spline coefficients (non-increasing, c_0 = anchor0, c_last >= 0 or = anchor1)."""
    setup = _setup(basis, float(lam), anchor1 is not None)
    values = np.array([anchor0] if anchor1 is None else [anchor0, anchor1])
    sw = np.sqrt(weight)
    data = sw[:, None] * Bx
    C = np.vstack([data[:, setup.free], setup.pen_free])
    d = np.r_[sw * rate - data[:, setup.fixed] @ values, -setup.pen_fixed @ values]
    x = _lsi(C, d, setup.G, -setup.G_fixed @ values)
    coef = np.empty(basis.n_basis)
    coef[setup.fixed] = values
    coef[setup.free] = x
    # The solution meets the constraints up to rounding; make them exact.
    lower = 0.0 if anchor1 is None else anchor1
    return np.minimum.accumulate(np.clip(coef, lower, anchor0))


def _fit_bins(
    basis: _Basis,
    x: np.ndarray,
    count: np.ndarray,
    correct: np.ndarray,
    lam: float,
    anchor0: float,
    anchor1: float | None,
    Bx: np.ndarray | None = None,
) -> np.ndarray:
    """Coefficients from per-bin positions, counts and correct counts (bins with count 0 drop)."""
    keep = count > 0
    total = count[keep].sum()
    if Bx is None:
        Bx = basis.design(x[keep])
    else:
        Bx = Bx[keep]
    if total > 0:
        weight = count[keep] / total
        rate = correct[keep] / count[keep]
    else:
        weight = rate = np.zeros(0)
    return _solve(basis, Bx, rate, weight, lam, anchor0, anchor1)


# ---------------------------------------------------------------------------------------- the curve


@dataclasses.dataclass(frozen=True)
class Curve:
    """A fitted curve: B-spline coefficients and its values on the shared grid."""

    grid: np.ndarray
    values: np.ndarray
    coef: np.ndarray
    knots: np.ndarray
    degree: int
    lam: float
    anchor0: float
    anchor1: float | None = None
    #: Cross-validation score per candidate penalty (``LAMBDA_GRID`` order), when selected by CV.
    cv_scores: np.ndarray | None = None

    def __call__(self, v) -> np.ndarray:
        """The spline at arbitrary Δv (clipped to [0, 1] against rounding)."""
        v = _as_dv(np.atleast_1d(v), "v")
        return np.clip(BSpline(self.knots, self.coef, self.degree)(v), 0.0, 1.0)

    def area(self, weighting: Weighting = None) -> float:
        return area(self.values, weighting, self.grid)


def _curve_values(basis: _Basis, coef: np.ndarray) -> np.ndarray:
    # Non-increasing coefficients give a non-increasing spline; the running minimum only removes
    # rounding noise (~1e-16) of the matrix product where the curve is flat.
    return np.minimum.accumulate(np.clip(basis.grid_design @ coef, 0.0, 1.0))


def _folds(n_units: int, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Fold of each unit: a seeded permutation dealt round-robin into ``n_folds`` folds."""
    fold = np.empty(n_units, dtype=np.int64)
    fold[rng.permutation(n_units)] = np.arange(n_units) % n_folds
    return fold


def _select_lambda(
    basis: _Basis,
    idx: np.ndarray,
    dv: np.ndarray,
    y: np.ndarray,
    fold: np.ndarray,
    used: np.ndarray,
    anchor0: float,
    anchor1: float | None,
    lam_grid: Sequence[float],
    M: int,
) -> tuple[float, np.ndarray]:
    """K-fold CV of the held-out Brier score over ``lam_grid``; the smoothest of near-ties wins.

    Each fold is fitted on the other folds' bins (restricted to the bins ``used`` on the full
    data) and scored on every held-out sample through its bin: the sum over bins of
    ``correct (1 - s)^2 + (count - correct) s^2`` with s the curve at the held-out bin mean.
    """
    n_folds = int(fold.max()) + 1
    scores = np.zeros(len(lam_grid))
    for f in range(n_folds):
        test = fold == f
        tr_count, tr_corr, tr_sum = _bin_sums(idx[~test], dv[~test], y[~test], None, M)
        te_count, te_corr, te_sum = _bin_sums(idx[test], dv[test], y[test], None, M)
        tr_count = np.where(used, tr_count, 0.0)
        keep = tr_count > 0
        x_tr = np.divide(tr_sum, tr_count, out=np.zeros(M), where=keep)
        Btr = basis.design(x_tr[keep])
        te_keep = te_count > 0
        Bte = basis.design(te_sum[te_keep] / te_count[te_keep])
        n_te, k_te = te_count[te_keep], te_corr[te_keep]
        for i, lam in enumerate(lam_grid):
            coef = _fit_bins(
                basis, x_tr[keep], tr_count[keep], tr_corr[keep], lam, anchor0, anchor1, Btr
            )
            s = np.clip(Bte @ coef, 0.0, 1.0)
            scores[i] += np.sum(k_te * (1 - s) ** 2 + (n_te - k_te) * s**2)
    scores /= len(y)
    best = scores.min()
    near = np.flatnonzero(scores <= best + 1e-12 * max(1.0, abs(best)))
    return float(lam_grid[int(near.max())]), scores


def _fit_samples(
    idx: np.ndarray,
    dv: np.ndarray,
    y: np.ndarray,
    anchor0: float,
    *,
    M: int,
    min_count: int,
    lam: float | None,
    anchor1: float | None,
    n_folds: int,
    rng: np.random.Generator,
    group_codes: np.ndarray | None,
    grid_size: int,
) -> tuple[Curve, pd.DataFrame]:
    """The full-data fit of :func:`estimate` (samples already validated, missing dropped)."""
    basis = _basis(M - 1, grid_size)
    count, corr, sum_dv = _bin_sums(idx, dv, y, None, M)
    table = _bins_frame(count, corr, sum_dv, M, min_count)
    used = table["used"].to_numpy()
    if not used.any():
        raise ValueError(
            f"no Δv bin holds at least min_count={min_count} samples (largest bin: "
            f"{int(count.max())} of {len(y)} samples); lower estimation.min_count or add samples"
        )
    cv_scores = None
    if lam is None:
        n_units = len(y) if group_codes is None else int(group_codes.max()) + 1
        k = min(int(n_folds), n_units)
        if k >= 2:
            unit_fold = _folds(n_units, k, rng)
            fold = unit_fold if group_codes is None else unit_fold[group_codes]
            lam, cv_scores = _select_lambda(
                basis, idx, dv, y, fold, used, anchor0, anchor1, LAMBDA_GRID, M
            )
        else:
            # Too few units to cross-validate: take the smoothest candidate, which bridges the
            # anchor and the data with a near-straight monotone line.
            lam = LAMBDA_GRID[-1]
    lam = float(lam)
    if not (lam > 0 and math.isfinite(lam)):
        raise ValueError(f"lam (smoothing penalty) must be positive and finite, got {lam!r}")
    used_count = np.where(used, count, 0.0)
    x = np.divide(sum_dv, count, out=np.zeros(M), where=count > 0)
    coef = _fit_bins(basis, x, used_count, corr, lam, anchor0, anchor1)
    curve = Curve(
        grid=basis.grid,
        values=_curve_values(basis, coef),
        coef=coef,
        knots=basis.knots,
        degree=basis.degree,
        lam=lam,
        anchor0=anchor0,
        anchor1=anchor1,
        cv_scores=cv_scores,
    )
    return curve, table


@_single_blas_thread
def fit_curve(
    bins: pd.DataFrame,
    anchor0: float,
    *,
    min_count: int = DEFAULT_MIN_COUNT,
    lam: float | None = None,
    anchor1: float | None = None,
    n_folds: int = DEFAULT_N_FOLDS,
    seed: int = 0,
    grid_size: int = GRID_SIZE,
) -> Curve:
    """Fit the monotone anchored smoothing spline to a bins table (from :func:`bin_counts`).

    Parameters
    ----------
    bins : DataFrame with ``bin``, ``count``, ``correct`` and ``v_mean`` (or ``v_center``); the
        number of rows is M.
    anchor0 : s(0): clean accuracy for s_a, 1 for s_p of a deterministic model, the humans' own
        clean consistency for their s_p.
    min_count : Alg. 1's L: bins with fewer samples are left out and bridged by the fit.
    lam : smoothing penalty; ``None`` selects it by ``n_folds``-fold cross-validation (the bins'
        samples are dealt into folds; use :func:`estimate` to fold by groups).
    anchor1 : optional s(1); by default the right end is free (only s(1) >= 0).
    seed : seeds the fold assignment.

    Returns
    -------
    Curve on the grid of ``grid_size`` points.
    """
    for col in ("bin", "count", "correct"):
        if col not in bins.columns:
            raise ValueError(f"bins table lacks column {col!r}")
    bins = bins.sort_values("bin", kind="stable")
    M = len(bins)
    if not np.array_equal(bins["bin"].to_numpy(), np.arange(M)):
        raise ValueError(f"bins table must hold every bin 0..{M - 1} once (as bin_counts gives)")
    count = bins["count"].to_numpy(np.float64)
    corr = bins["correct"].to_numpy(np.float64)
    if (count < 0).any() or (corr < 0).any() or (corr > count).any():
        raise ValueError("bins table: need 0 <= correct <= count in every bin")
    if count.sum() == 0:
        raise ValueError("bins table is empty: no samples in any bin")
    pos = bins["v_mean"] if "v_mean" in bins.columns else bins["v_center"]
    pos = pos.fillna(bins["v_center"]) if "v_center" in bins.columns else pos.fillna(0.0)
    # Expand the table to pseudo-samples at their bin mean: the fit and the CV folds only depend
    # on per-bin sums, so this is exact for the fit and a sample-level split for the CV.
    # Each bin becomes its correct samples, then its wrong ones.
    reps = np.column_stack([corr, count - corr]).astype(np.int64).ravel()
    idx = np.repeat(np.repeat(np.arange(M, dtype=np.int64), 2), reps)
    dv = np.repeat(np.repeat(pos.to_numpy(np.float64), 2), reps)
    y = np.repeat(np.tile([1.0, 0.0], M), reps)
    anchor0 = _check_anchor(anchor0, "anchor0")
    anchor1 = None if anchor1 is None else _check_anchor(anchor1, "anchor1")
    if anchor1 is not None and anchor1 > anchor0:
        raise ValueError(
            f"anchor1 ({anchor1}) exceeds anchor0 ({anchor0}): the curve is non-increasing"
        )
    rng = np.random.Generator(np.random.PCG64(seed))
    curve, _ = _fit_samples(
        idx,
        dv,
        y,
        anchor0,
        M=M,
        min_count=min_count,
        lam=lam,
        anchor1=anchor1,
        n_folds=n_folds,
        rng=rng,
        group_codes=None,
        grid_size=grid_size,
    )
    return curve


# ------------------------------------------------------------------------------------------- areas


def weights_on_grid(weighting: Weighting, grid: np.ndarray) -> np.ndarray:
    """A weighting over Δv evaluated on ``grid`` and normalised to integrate to 1 there.

    ``weighting`` is ``None`` or ``"uniform"`` (the paper's R̂), ``"beta:A,B"`` (the Beta(A, B)
    density, A, B >= 1; e.g. ``"beta:2,1"`` favours heavy corruption, as the paper's footnote
    suggests for heavy snow), a callable ``w(v) -> array``, or an array of one weight per grid
    point. Weights must be finite, non-negative and not all zero.
    """
    grid = np.asarray(grid, dtype=np.float64)
    if weighting is None or (isinstance(weighting, str) and weighting == "uniform"):
        w = np.ones_like(grid)
    elif isinstance(weighting, str):
        name, _, args = weighting.partition(":")
        if name != "beta":
            raise ValueError(
                f"unknown weighting {weighting!r}; use 'uniform', 'beta:A,B', a function or an array"
            )
        try:
            a, b = (float(s) for s in args.split(","))
        except ValueError:
            raise ValueError(
                f"weighting {weighting!r}: expected 'beta:A,B' with two numbers"
            ) from None
        if a < 1 or b < 1:
            raise ValueError(f"weighting {weighting!r}: A and B must be >= 1 (finite density)")
        from scipy.stats import beta as beta_dist

        w = beta_dist.pdf(grid, a, b)
    elif callable(weighting):
        w = np.asarray(weighting(grid), dtype=np.float64)
    else:
        w = np.asarray(weighting, dtype=np.float64)
    if w.shape != grid.shape:
        raise ValueError(
            f"weighting gives shape {w.shape}, expected one weight per grid point {grid.shape}"
        )
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("weighting must be finite and non-negative on [0, 1]")
    total = np.trapezoid(w, grid)
    if not total > 0:
        raise ValueError("weighting integrates to 0 over [0, 1]")
    return w / total


def weighting_name(weighting: Weighting) -> str:
    """A short name of a weighting for tables (callables and arrays are 'custom')."""
    if weighting is None:
        return "uniform"
    return weighting if isinstance(weighting, str) else "custom"


def area(curve, weighting: Weighting = None, grid: np.ndarray | None = None):
    """R̂ = ∫₀¹ s(v) w(v) dv by the trapezoid rule on the grid (w ≡ 1 by default).

    ``curve`` is a :class:`Curve`, an :class:`Estimate`, or values on ``grid`` (shape (..., G):
    a 2-D array gives one area per row). ``grid`` defaults to the curve's own or the default grid.
    """
    if isinstance(curve, Curve | Estimate):
        grid = curve.grid if grid is None else grid
        curve = curve.values
    values = np.asarray(curve, dtype=np.float64)
    grid = default_grid(values.shape[-1]) if grid is None else np.asarray(grid, dtype=np.float64)
    if values.shape[-1] != len(grid):
        raise ValueError(f"curve has {values.shape[-1]} points, grid has {len(grid)}")
    w = weights_on_grid(weighting, grid)
    result = np.trapezoid(values * w, grid, axis=-1)
    return float(result) if np.ndim(result) == 0 else result


# --------------------------------------------------------------------------------------- bootstrap


def _multiplicities(n: int, rng: np.random.Generator) -> np.ndarray:
    """How often each of n units is drawn in one resample of size n with replacement."""
    return np.bincount(rng.integers(0, n, n), minlength=n).astype(np.float64)


def _prepare_anchor(anchor0, anchor_groups):
    """(point value, outcomes or None, anchor group codes or None) from a float or outcomes."""
    if np.ndim(anchor0) == 0:
        if anchor_groups is not None:
            raise ValueError("anchor_groups given but anchor0 is a number, not clean outcomes")
        return _check_anchor(anchor0, "anchor0"), None
    out = _as_outcomes(anchor0, "anchor0")
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


def _replicate_curves(
    idx: np.ndarray,
    dv: np.ndarray,
    y: np.ndarray,
    anchor0: float,
    anchor_data,
    groups,
    *,
    M: int,
    used: np.ndarray,
    lam: float,
    anchor1: float | None,
    n_boot: int,
    rng: np.random.Generator,
    grid_size: int,
    progress: bool | None,
) -> np.ndarray:
    basis = _basis(M - 1, grid_size)
    out = np.empty((n_boot, len(basis.grid)), dtype=np.float32)
    anchor_out = None if anchor_data is None else anchor_data[0]
    anchor_labels = None if anchor_data is None else anchor_data[1]
    # Groups of samples and of clean outcomes are resampled jointly (one draw of participants).
    n = len(y)
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
    for b in tqdm(range(n_boot), desc="bootstrap", disable=progress is not True, leave=False):
        if sample_codes is not None:
            unit_mult = _multiplicities(n_units, rng)
            w = unit_mult[sample_codes]
        else:
            unit_mult = None
            w = _multiplicities(n, rng)
        a0 = anchor0
        if anchor_out is not None:
            if anchor_codes is not None and unit_mult is not None:
                aw = unit_mult[anchor_codes]
            elif anchor_codes is not None:
                aw = _multiplicities(int(anchor_codes.max()) + 1, rng)[anchor_codes]
            else:
                aw = _multiplicities(len(anchor_out), rng)
            # A draw with no clean outcome at all keeps the point anchor.
            a0 = float(aw @ anchor_out / aw.sum()) if aw.sum() > 0 else anchor0
            if anchor1 is not None:
                a0 = max(a0, anchor1)
        count, corr, sum_dv = _bin_sums(idx, dv, y, w, M)
        count = np.where(used, count, 0.0)
        x = np.divide(sum_dv, count, out=np.zeros(M), where=count > 0)
        coef = _fit_bins(basis, x, count, corr, lam, a0, anchor1)
        out[b] = _curve_values(basis, coef)
    return out


@_single_blas_thread
def bootstrap(
    dv,
    correct,
    anchor0,
    *,
    lam: float,
    bins: int = N_BINS,
    min_count: int = DEFAULT_MIN_COUNT,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    groups=None,
    anchor_groups=None,
    anchor1: float | None = None,
    grid_size: int = GRID_SIZE,
    progress: bool | None = None,
) -> np.ndarray:
    """Bootstrap replicate curves, shape ``(n_boot, grid_size)``, float32.

    Each replicate resamples the samples with replacement (or, with ``groups``, whole groups such
    as participants: a cluster bootstrap), rebuilds the bins and refits with the fixed penalty
    ``lam`` (normally the one cross-validation chose on the full data). The bins that enter the
    fit are those with at least ``min_count`` samples in the full data. If ``anchor0`` is an
    array of clean 0/1 outcomes rather than a number, the anchor is resampled too (jointly with
    the samples' groups when ``anchor_groups`` is given). Same arguments and seed, same result.
    """
    dv = _as_dv(dv)
    y = _as_outcomes(correct)
    if len(y) != len(dv):
        raise ValueError(f"dv has {len(dv)} values but correct has {len(y)}")
    keep = ~np.isnan(y)
    if not keep.any():
        raise ValueError("no observations: every value of 'correct' is missing")
    if groups is not None:
        _as_groups(groups, len(y))
        groups = pd.Series(groups)[keep].reset_index(drop=True)
    dv, y = dv[keep], y[keep]
    a0, anchor_data = _prepare_anchor(anchor0, anchor_groups)
    idx = bin_index(dv, bins)
    count, _, _ = _bin_sums(idx, dv, y, None, bins)
    used = count >= max(int(min_count), 1)
    rng = np.random.Generator(np.random.PCG64(seed))
    return _replicate_curves(
        idx,
        dv,
        y,
        a0,
        anchor_data,
        groups,
        M=bins,
        used=used,
        lam=float(lam),
        anchor1=anchor1,
        n_boot=int(n_boot),
        rng=rng,
        grid_size=grid_size,
        progress=progress,
    )


# ---------------------------------------------------------------------------------------- estimate


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


@dataclasses.dataclass(frozen=True, eq=False)
class Estimate:
    """Everything the workflow keeps about one curve (a model or the human reference).

    ``values`` is the fitted curve on ``grid``; ``lo``/``hi`` its pointwise percentile band at
    ``level``; ``area`` is R̂ under ``weighting`` with percentile interval ``area_lo``/``area_hi``;
    ``replicates`` holds the bootstrap curves (B, G) as float32 (B = 0: no band, NaN intervals).
    """

    bins: pd.DataFrame
    grid: np.ndarray
    values: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    level: float
    area: float
    area_lo: float
    area_hi: float
    replicates: np.ndarray
    anchor0: float
    anchor1: float | None
    lam: float
    min_count: int
    weighting: str
    n: int
    n_missing: int
    n_groups: int | None
    seed: int

    @property
    def n_boot(self) -> int:
        return int(self.replicates.shape[0])

    def band(
        self, level: float = DEFAULT_LEVEL, kind: str = "pointwise"
    ) -> tuple[np.ndarray, np.ndarray]:
        """Band of the curve at ``level`` (e.g. 0.83) from the replicates.

        ``kind="pointwise"``: percentiles of the replicates at each Δv (the paper's bands);
        ``kind="simultaneous"``: a sup-t band (:func:`simultaneous_band`) that holds whole
        replicate curves with probability ``level``.
        """
        if kind == "pointwise":
            return percentile_interval(self.replicates, level)
        if kind == "simultaneous":
            return simultaneous_band(self.replicates, self.values, level)
        raise ValueError(f"band kind must be 'pointwise' or 'simultaneous', got {kind!r}")

    def replicate_areas(self, weighting: Weighting = None) -> np.ndarray:
        return np.atleast_1d(area(self.replicates.astype(np.float64), weighting, self.grid))

    def area_interval(self, level: float = DEFAULT_LEVEL, weighting: Weighting = None) -> tuple:
        lo, hi = percentile_interval(self.replicate_areas(weighting), level)
        return float(lo), float(hi)

    # -------------------------------------------------------------------- tidy tables for Parquet

    def curve_frame(self) -> pd.DataFrame:
        """Columns ``v, s, lo, hi`` (float64), one row per grid point."""
        return pd.DataFrame({"v": self.grid, "s": self.values, "lo": self.lo, "hi": self.hi})

    def bins_frame(self) -> pd.DataFrame:
        return self.bins.copy()

    def summary_frame(self) -> pd.DataFrame:
        """One row: R̂, its interval and every setting needed to rebuild the Estimate."""
        return pd.DataFrame(
            {
                "area": [self.area],
                "area_lo": [self.area_lo],
                "area_hi": [self.area_hi],
                "level": [self.level],
                "anchor0": [self.anchor0],
                "anchor1": [np.nan if self.anchor1 is None else self.anchor1],
                "lam": [self.lam],
                "min_count": [self.min_count],
                "weighting": [self.weighting],
                "n": [self.n],
                "n_missing": [self.n_missing],
                "n_groups": [-1 if self.n_groups is None else self.n_groups],
                "n_boot": [self.n_boot],
                "seed": [self.seed],
                "grid_size": [len(self.grid)],
            }
        )

    def replicates_frame(self) -> pd.DataFrame:
        """Long table ``replicate`` (int32), ``i`` (grid index, int32), ``s`` (float32)."""
        B, G = self.replicates.shape
        return pd.DataFrame(
            {
                "replicate": np.repeat(np.arange(B, dtype=np.int32), G),
                "i": np.tile(np.arange(G, dtype=np.int32), B),
                "s": self.replicates.reshape(-1),
            }
        )

    def to_frames(self) -> dict[str, pd.DataFrame]:
        """``{"bins", "curve", "summary", "replicates"}`` tables; :meth:`from_frames` inverts."""
        return {
            "bins": self.bins_frame(),
            "curve": self.curve_frame(),
            "summary": self.summary_frame(),
            "replicates": self.replicates_frame(),
        }

    @classmethod
    def from_frames(
        cls,
        bins: pd.DataFrame,
        curve: pd.DataFrame,
        summary: pd.DataFrame,
        replicates: pd.DataFrame | None = None,
    ) -> Estimate:
        """Rebuild an Estimate from :meth:`to_frames` tables (e.g. read back from Parquet).

        Extra key columns (model, corruption, …) are ignored; pass the rows of one estimate.
        """
        if len(summary) != 1:
            raise ValueError(f"summary must have exactly one row, got {len(summary)}")
        row = summary.iloc[0]
        curve = curve.sort_values("v", kind="stable")
        G = int(row["grid_size"])
        if len(curve) != G:
            raise ValueError(f"curve table has {len(curve)} rows, summary says grid_size={G}")
        if replicates is None or len(replicates) == 0:
            reps = np.zeros((0, G), dtype=np.float32)
        else:
            rep = replicates.sort_values(["replicate", "i"], kind="stable")
            B = rep["replicate"].nunique()
            if len(rep) != B * G:
                raise ValueError(f"replicates table has {len(rep)} rows, expected {B} x {G}")
            reps = rep["s"].to_numpy(np.float32).reshape(B, G)
        bins_cols = [
            "bin",
            "v_lo",
            "v_hi",
            "v_center",
            "v_mean",
            "count",
            "correct",
            "rate",
            "used",
        ]
        anchor1 = float(row["anchor1"])
        n_groups = int(row["n_groups"])
        return cls(
            bins=bins[bins_cols].sort_values("bin", kind="stable").reset_index(drop=True),
            grid=curve["v"].to_numpy(np.float64),
            values=curve["s"].to_numpy(np.float64),
            lo=curve["lo"].to_numpy(np.float64),
            hi=curve["hi"].to_numpy(np.float64),
            level=float(row["level"]),
            area=float(row["area"]),
            area_lo=float(row["area_lo"]),
            area_hi=float(row["area_hi"]),
            replicates=reps,
            anchor0=float(row["anchor0"]),
            anchor1=None if math.isnan(anchor1) else anchor1,
            lam=float(row["lam"]),
            min_count=int(row["min_count"]),
            weighting=str(row["weighting"]),
            n=int(row["n"]),
            n_missing=int(row["n_missing"]),
            n_groups=None if n_groups < 0 else n_groups,
            seed=int(row["seed"]),
        )

    def metadata(self) -> dict:
        """JSON-ready settings (for Parquet provenance metadata)."""
        return json.loads(self.summary_frame().iloc[0].to_json())


@_single_blas_thread
def estimate(
    dv,
    correct,
    anchor0,
    *,
    bins: int = N_BINS,
    min_count: int = DEFAULT_MIN_COUNT,
    n_boot: int = DEFAULT_N_BOOT,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    groups=None,
    anchor_groups=None,
    weighting: Weighting = None,
    lam: float | None = None,
    anchor1: float | None = None,
    n_folds: int = DEFAULT_N_FOLDS,
    grid_size: int = GRID_SIZE,
    progress: bool | None = None,
) -> Estimate:
    """Alg. 1 for one (model or human reference, corruption, label space, property).

    Parameters
    ----------
    dv : Δv of each sample, in [0, 1].
    correct : 0/1 or boolean outcome per sample (accuracy f(x') = y, or consistency
        f(x') = f(x)); NaN = missing (dropped and counted in ``n_missing``).
    anchor0 : s(0): a number (clean accuracy; 1 for the consistency of a deterministic model), or
        the array of clean 0/1 outcomes it is the mean of, which the bootstrap then resamples.
    bins : M, the number of Δv bins.
    min_count : L, the minimum bin count for a bin's rate to enter the fit.
    n_boot : bootstrap replicates (0: none; band and intervals are NaN).
    level : level of the pointwise band and of the R̂ interval.
    seed : int seed; CV folds and bootstrap draws come from independent child generators of
        ``numpy.random.Generator(PCG64(seed))``.
    groups : optional group label per sample (e.g. participant): CV folds and bootstrap resample
        whole groups.
    anchor_groups : optional group label per clean outcome (with array ``anchor0``), resampled
        jointly with ``groups``.
    weighting : weighting over Δv for R̂ (see :func:`weights_on_grid`); the curve is unaffected.
    lam : fixed smoothing penalty; ``None`` (default) chooses it by cross-validation.
    anchor1 : optional s(1); default: free right end.
    n_folds : K of the K-fold cross-validation.

    Returns
    -------
    Estimate
    """
    dv = _as_dv(dv)
    y = _as_outcomes(correct)
    if len(y) != len(dv):
        raise ValueError(f"dv has {len(dv)} values but correct has {len(y)}")
    if len(y) == 0:
        raise ValueError("no observations: dv and correct are empty")
    keep = ~np.isnan(y)
    if not keep.any():
        raise ValueError(f"no observations: all {len(y)} values of 'correct' are missing")
    group_codes = None
    n_groups = None
    if groups is not None:
        _as_groups(groups, len(y))
        groups = pd.Series(groups)[keep].reset_index(drop=True)
        group_codes = _as_groups(groups, int(keep.sum()))
        n_groups = int(group_codes.max()) + 1
    n_missing = int((~keep).sum())
    dv, y = dv[keep], y[keep]
    a0, anchor_data = _prepare_anchor(anchor0, anchor_groups)
    if anchor1 is not None:
        anchor1 = _check_anchor(anchor1, "anchor1")
        if anchor1 > a0:
            raise ValueError(
                f"anchor1 ({anchor1}) exceeds anchor0 ({a0}): the curve is non-increasing"
            )
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
    percentile_interval(np.zeros((0,)), level)  # validates level
    weights_on_grid(weighting, default_grid(grid_size))  # validates weighting before any work
    cv_rng, boot_rng = np.random.Generator(np.random.PCG64(seed)).spawn(2)
    idx = bin_index(dv, bins)
    curve, table = _fit_samples(
        idx,
        dv,
        y,
        a0,
        M=bins,
        min_count=min_count,
        lam=lam,
        anchor1=anchor1,
        n_folds=n_folds,
        rng=cv_rng,
        group_codes=group_codes,
        grid_size=grid_size,
    )
    reps = _replicate_curves(
        idx,
        dv,
        y,
        a0,
        anchor_data,
        groups,
        M=bins,
        used=table["used"].to_numpy(),
        lam=curve.lam,
        anchor1=anchor1,
        n_boot=int(n_boot),
        rng=boot_rng,
        grid_size=grid_size,
        progress=progress,
    )
    lo, hi = percentile_interval(reps, level)
    rep_areas = np.atleast_1d(area(reps.astype(np.float64), weighting, curve.grid))
    area_lo, area_hi = percentile_interval(rep_areas, level)
    return Estimate(
        bins=table,
        grid=curve.grid,
        values=curve.values,
        lo=np.asarray(lo, dtype=np.float64),
        hi=np.asarray(hi, dtype=np.float64),
        level=float(level),
        area=area(curve.values, weighting, curve.grid),
        area_lo=float(area_lo),
        area_hi=float(area_hi),
        replicates=reps,
        anchor0=a0,
        anchor1=anchor1,
        lam=curve.lam,
        min_count=int(min_count),
        weighting=weighting_name(weighting),
        n=len(y),
        n_missing=n_missing,
        n_groups=n_groups,
        seed=int(seed),
    )


__all__ = [
    "DEFAULT_LEVEL",
    "DEFAULT_MIN_COUNT",
    "DEFAULT_N_BOOT",
    "DEFAULT_N_FOLDS",
    "GRID_SIZE",
    "LAMBDA_GRID",
    "N_BINS",
    "Curve",
    "Estimate",
    "area",
    "bin_counts",
    "bin_edges",
    "bin_index",
    "bootstrap",
    "default_grid",
    "estimate",
    "fit_curve",
    "percentile_interval",
    "simultaneous_band",
    "weighting_name",
    "weights_on_grid",
]
