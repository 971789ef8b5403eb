"""The anchored monotone smoothing spline of Alg. 1 and its penalty.

Two fits (``spline``): ``"pspline"`` (the default), a penalised cubic B-spline (P-spline) with knots
at the bin edges j / (M − 1) is fitted by weighted least squares to the rates of the bins holding at
least ``min_count`` samples, constrained to be non-increasing, to start at the anchor
``s(0) = anchor0`` (and optionally end at ``s(1) = anchor1``) and to stay within [0, 1]. The
constrained fit is a small quadratic programme, solved exactly as a least-distance problem with
:func:`scipy.optimize.nnls` (Lawson & Hanson). The penalty is chosen by K-fold cross-validation of
the held-out Brier score, folding samples or, with groups, whole groups. ``"quantile"``: the
quantile (median) smoothing spline the paper cites, L1 fidelity and L1 roughness, a linear programme
with its penalty chosen by SIC (:mod:`vcrbench.estimation.quantile`). :func:`fit_curve` is the fit
every estimate runs (:func:`vcrbench.estimation.estimate` adds the bootstrap).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from vcrbench.bins import as_dv, bin_index
from vcrbench.estimation import lazy_scipy
from vcrbench.estimation.area import Weighting, area, default_grid
from vcrbench.estimation.counts import DEFAULT, bin_sums, bins_with_data, zero_filled
from vcrbench.estimation.quantile import QUANTILE_LAMBDA_GRID, fit_quantile, select_lambda_sic
from vcrbench.estimation.validate import (
    check_anchor,
    check_samples,
    fixed_anchor1,
    sample_weights,
    single_blas_thread,
)
from vcrbench.settings import EstimationSettings

#: Cubic B-splines with knots at the bin edges j / (M - 1).
SPLINE_DEGREE = 3
#: The fits of :func:`fit_curve` and the degree of each one's B-splines: the least-squares
#: P-spline (cubic) and Koenker, Ng & Portnoy's quantile smoothing spline (linear).
SPLINES = {"pspline": SPLINE_DEGREE, "quantile": 1}
#: Candidate penalties (weights are normalised to sum to 1): 10^-8 … 10^2 in half decades.
LAMBDA_GRID = tuple(float(10.0**e) for e in np.arange(-8.0, 2.01, 0.5))
#: A tiny first-difference ridge that keeps the least-squares matrix of full rank when data are
#: sparse; its effect on a fitted curve is far below 1e-6.
_RIDGE = 1e-9
#: Anchors this close (s(0) - s(1), or s(0) with a free end) leave no room to fit: the curve is
#: the constant anchor.
_NARROW = 1e-12

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
        return lazy_scipy.bspline().design_matrix(x, self.knots, self.degree).toarray()

    def designs(self, xs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """:meth:`design` of each of ``xs``, cut from one design matrix of them all (each row
        depends on its own x only), each its own array."""
        design = self.design(np.concatenate(xs))
        ends = np.cumsum([len(x) for x in xs])
        return [design[end - len(x) : end].copy() for x, end in zip(xs, ends, strict=True)]


@functools.lru_cache(maxsize=16)
def _basis(n_segments: int, grid_size: int, degree: int = SPLINE_DEGREE) -> _Basis:
    inner = np.linspace(0.0, 1.0, n_segments + 1)
    knots = np.r_[np.zeros(degree), inner, np.ones(degree)]
    n = len(knots) - degree - 1
    grid = default_grid(grid_size)
    grid_design = lazy_scipy.bspline().design_matrix(grid, knots, degree).toarray()
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
    for arr in (knots, grid_design, D1, D2, monotone):
        arr.setflags(write=False)
    return _Basis(knots, degree, grid, grid_design, D2, D1, monotone)


# ------------------------------------------------------------------------------------------- solver


def _lsi(C: np.ndarray, d: np.ndarray, G: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Minimise ||C x - d|| subject to G x >= h (C of full column rank), exactly.

    Lawson & Hanson (1974, ch. 23): with C = QR, z = R x - Qᵀd turns the problem into the
    least-distance problem min ||z|| s.t. (G R⁻¹) z >= h - G R⁻¹ Qᵀ d, whose solution is read off
    one non-negative least-squares problem. This is the same reduction SLSQP uses internally; we
    call it directly because scipy has no QP solver and the problem is tiny (about 41 unknowns).
    """
    n = C.shape[1]
    # QR of [C | d] (in LAPACK's column order, so it is not copied again): its R holds R and
    # Qᵀd in its last column, without forming Q.
    Cd = np.empty((C.shape[0], n + 1), order="F")
    Cd[:, :n] = C
    Cd[:, n] = d
    geqrf, _ = lazy_scipy.lapack()
    qr, _, _, info = geqrf(Cd, overwrite_a=True)
    if info != 0:
        raise RuntimeError(f"monotone spline fit: QR factorisation failed (LAPACK info {info})")
    qtd = qr[:n, n]
    if len(h) == 0:
        return lazy_scipy.solve_triangular(np.triu(qr[:n, :n]), qtd, check_finite=False)
    Rinv = _inverse_upper(qr[:n, :n])
    A = G @ Rinv
    b = h - A @ qtd
    E = np.vstack([A.T, b[None, :]])
    f = np.zeros(n + 1)
    f[-1] = 1.0
    u, _ = lazy_scipy.nnls(E, f, maxiter=50 * E.shape[1])
    r = E @ u - f
    if abs(r[-1]) < 1e-14:
        raise RuntimeError("monotone spline fit: constraints are infeasible")
    z = -r[:n] / r[-1]
    return Rinv @ (z + qtd)


def _inverse_upper(R: np.ndarray) -> np.ndarray:
    """R⁻¹ of the upper triangle of ``R`` (what lies below it is never read), exactly as
    ``solve_triangular(np.triu(R), np.eye(n), check_finite=False)`` computes it (LAPACK trtrs on
    the transpose of the C-ordered triangle), without its wrapper's checks."""
    RT = np.ascontiguousarray(R).T
    _, trtrs = lazy_scipy.lapack()
    x, info = trtrs(RT, np.eye(len(R)), overwrite_b=False, lower=True, trans=1, unitdiag=False)
    if info > 0:
        raise np.linalg.LinAlgError(f"singular matrix: resolution failed at diagonal {info - 1}")
    if info < 0:
        raise ValueError(f"illegal value in {-info}-th argument of internal trtrs")
    return x


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


def _solver(basis: _Basis, Bx, rate, weight, anchor0: float, anchor1: float | None):
    """``lam ->`` spline coefficients (non-increasing, c_0 = anchor0, c_last >= 0 or = anchor1)
    fitted to these bins, their weighted rows formed once for every ``lam``."""
    lower = 0.0 if anchor1 is None else anchor1
    if anchor0 - lower <= _NARROW:
        # Every feasible curve lies within the band [lower, anchor0]; narrower than this, the
        # constant anchor is the fit to within it (and nnls cannot iterate on a band of ~1e-308).
        return lambda lam: np.full(basis.n_basis, anchor0)
    pinned_end = anchor1 is not None
    values = np.array([anchor0] if anchor1 is None else [anchor0, anchor1])
    sw = np.sqrt(weight)
    data = sw[:, None] * Bx
    # which coefficients are free does not depend on the penalty
    setup = _setup(basis, 1.0, pinned_end)
    data_free = data[:, setup.free]
    d_data = sw * rate - data[:, setup.fixed] @ values

    def solve(lam: float) -> np.ndarray:
        setup = _setup(basis, float(lam), pinned_end)
        C = np.vstack([data_free, setup.pen_free])
        d = np.r_[d_data, -setup.pen_fixed @ values]
        x = _lsi(C, d, setup.G, -setup.G_fixed @ values)
        coef = np.empty(basis.n_basis)
        coef[setup.fixed] = values
        coef[setup.free] = x
        # The solution meets the constraints up to rounding; make them exact.
        return np.minimum.accumulate(np.clip(coef, lower, anchor0))

    return solve


def _fit_bins(
    basis: _Basis,
    x: np.ndarray,
    count: np.ndarray,
    correct: np.ndarray,
    lam: float,
    anchor0: float,
    anchor1: float | None,
    Bx: np.ndarray | None = None,
    *,
    spline: str,
) -> np.ndarray:
    """Coefficients from per-bin positions, counts and correct counts (bins with count 0 drop)."""
    Bx, rate, weight = _bin_data(basis, x, count, correct, Bx)
    if spline == "quantile":
        lower = 0.0 if anchor1 is None else anchor1
        if anchor0 - lower <= _NARROW:
            return np.full(basis.n_basis, anchor0)
        return fit_quantile(basis, Bx, rate, weight, lam, anchor0, anchor1)
    return _solver(basis, Bx, rate, weight, anchor0, anchor1)(lam)


def _bin_data(basis, x, count, correct, Bx=None):
    """``(design, rate, weight)`` of the bins with samples: weights are counts over their sum."""
    keep = count > 0
    total = count[keep].sum()
    Bx = basis.design(x[keep]) if Bx is None else Bx[keep]
    if total > 0:
        return Bx, correct[keep] / count[keep], count[keep] / total
    return Bx, np.zeros(0), np.zeros(0)


def _select_lambda_sic(basis, x, count, correct, anchor0, anchor1, lam_grid=QUANTILE_LAMBDA_GRID):
    """The quantile spline's penalty by SIC on the bins (:func:`select_lambda_sic`)."""
    lower = 0.0 if anchor1 is None else anchor1
    if anchor0 - lower <= _NARROW:
        return float(lam_grid[-1]), np.zeros(len(lam_grid))
    Bx, rate, weight = _bin_data(basis, x, count, correct)
    return select_lambda_sic(basis, Bx, rate, weight, anchor0, anchor1, lam_grid)


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
    #: The fit (:data:`SPLINES`).
    spline: str
    anchor1: float | None = None
    #: Score per candidate penalty when it was selected: cross-validation over ``LAMBDA_GRID``
    #: (P-spline) or SIC over ``QUANTILE_LAMBDA_GRID`` (quantile spline).
    cv_scores: np.ndarray | None = None
    #: The bins table of the samples it was fitted to (:func:`~vcrbench.estimation.bin_counts`).
    bins: pd.DataFrame | None = dataclasses.field(default=None, repr=False, compare=False)

    def __call__(self, v) -> np.ndarray:
        """The spline at arbitrary Δv (clipped to [0, 1] against rounding)."""
        v = as_dv(np.atleast_1d(v), "v")
        return np.clip(lazy_scipy.bspline()(self.knots, self.coef, self.degree)(v), 0.0, 1.0)

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
    n_bins: int,
    w: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """K-fold CV of the held-out Brier score over ``lam_grid``; the smoothest of near-ties wins.

    Each fold is fitted on the other folds' bins (restricted to the bins ``used`` on the full
    data) and scored on every held-out sample through its bin: the sum over bins of
    ``correct (1 - s)^2 + (count - correct) s^2`` with s the curve at the held-out bin mean.
    ``w``: sample multiplicities (a bootstrap resample); None = each sample once.
    """
    n_folds = int(fold.max()) + 1
    scores = np.zeros(len(lam_grid))
    folds = []  # per fold: its training bins (x, count, correct), its held-out ones (x, n, k)
    for f in range(n_folds):
        test = fold == f
        w_tr = None if w is None else w[~test]
        w_te = None if w is None else w[test]
        tr_count, tr_corr, tr_sum = bin_sums(idx[~test], dv[~test], y[~test], w_tr, n_bins)
        te_count, te_corr, te_sum = bin_sums(idx[test], dv[test], y[test], w_te, n_bins)
        tr_count = np.where(used, tr_count, 0.0)
        keep = tr_count > 0
        x_tr = np.divide(tr_sum, tr_count, out=np.zeros(n_bins), where=keep)
        te_keep = te_count > 0
        x_te = te_sum[te_keep] / te_count[te_keep]
        training = (x_tr[keep], tr_count[keep], tr_corr[keep])
        folds.append((training, (x_te, te_count[te_keep], te_corr[te_keep])))
    designs = basis.designs([t[0] for t, _ in folds] + [h[0] for _, h in folds])
    for f, ((x_tr, count, corr), (_, n_te, k_te)) in enumerate(folds):
        Bte = designs[n_folds + f]
        # the fold's bins as _fit_bins takes them, once for every candidate penalty
        solve = _solver(basis, *_bin_data(basis, x_tr, count, corr, designs[f]), anchor0, anchor1)
        for i, lam in enumerate(lam_grid):
            coef = solve(lam)
            s = np.clip(Bte @ coef, 0.0, 1.0)
            scores[i] += np.sum(k_te * (1 - s) ** 2 + (n_te - k_te) * s**2)
    scores /= len(y) if w is None else max(float(w.sum()), 1.0)
    best = scores.min()
    near = np.flatnonzero(scores <= best + 1e-12 * max(1.0, abs(best)))
    return float(lam_grid[int(near.max())]), scores


@single_blas_thread
def fit_curve(
    dv,
    correct,
    anchor0: float,
    settings: EstimationSettings = DEFAULT,
    *,
    seed: int | np.random.Generator,
    groups=None,
    weights=None,
) -> Curve:
    """Alg. 1's curve: the monotone anchored smoothing spline through the bin rates of samples.

    Parameters
    ----------
    dv : Δv of each sample, in [0, 1].
    correct : 0/1 or boolean outcome per sample; NaN = missing (dropped).
    anchor0 : s(0): clean accuracy for s_a, 1 for s_p of a deterministic model.
    settings : the estimator's settings (:class:`~vcrbench.settings.EstimationSettings`): M =
        ``bins``; Alg. 1's L = ``min_count`` (bins with fewer samples are left out and bridged by
        the fit); the ``spline``, ``pspline`` (penalised least squares, cubic) or ``quantile``
        (Koenker, Ng & Portnoy's L1 quantile smoothing spline, linear;
        :mod:`vcrbench.estimation.quantile`); its penalty ``lam`` (None selects it: P-spline by
        ``n_folds``-fold cross-validation, quantile spline by SIC); s(1) = ``anchor1`` (None: the
        right end is free, only s(1) >= 0); ``empty_bins`` ``skip`` (bins under ``min_count`` are
        missing) or ``zero`` (they enter at rate 0, :func:`zero_filled`; the P-spline's penalty
        is still cross-validated on the samples alone); the grid of ``grid_size`` points.
    seed : seeds the fold assignment (an int, or the generator to draw from).
    groups : optional group label per sample (e.g. image, participant): folds hold whole groups.
    weights : optional non-negative weight per sample (None: 1 each); bin counts and correct
        counts are weighted sums (:func:`sample_weights` checks them).

    Returns
    -------
    Curve on the grid of ``grid_size`` points, with the bins table of the samples (``bins``).
    """
    n_bins, spline, lam = settings.bins, settings.spline, settings.lam
    samples = check_samples(dv, correct, groups)
    anchor0, anchor1 = _checked_anchors(anchor0, settings.anchor1)
    rng = (
        seed
        if isinstance(seed, np.random.Generator)
        else np.random.Generator(np.random.PCG64(seed))
    )
    dv, y = samples.dv, samples.y
    weights = sample_weights(weights, correct)
    idx = bin_index(dv, n_bins)
    basis = _basis(n_bins - 1, settings.grid_size, SPLINES[spline])
    count, corr, sum_dv = bin_sums(idx, dv, y, weights, n_bins)
    table = bins_with_data(count, corr, sum_dv, n_bins, settings.min_count, len(y))
    used = table["used"].to_numpy()
    cv_scores = None
    used_count = np.where(used, count, 0.0)
    x = np.divide(sum_dv, count, out=np.zeros(n_bins), where=count > 0)
    if settings.empty_bins == "zero":
        x, used_count, corr = zero_filled(x, used_count, corr, used, n_bins)
    if lam is None and spline == "quantile":
        lam, cv_scores = _select_lambda_sic(basis, x, used_count, corr, anchor0, anchor1)
    elif lam is None:
        lam, cv_scores = _cross_validated_lambda(
            basis, idx, dv, y, samples.group_codes, used, anchor0, anchor1, n_bins,
            settings.n_folds, rng, weights,
        )  # fmt: skip
    lam = float(lam)
    if not (lam > 0 and math.isfinite(lam)):
        raise ValueError(f"lam (smoothing penalty) must be positive and finite, got {lam!r}")
    coef = _fit_bins(basis, x, used_count, corr, lam, anchor0, anchor1, spline=spline)
    return Curve(
        grid=basis.grid,
        values=_curve_values(basis, coef),
        coef=coef,
        knots=basis.knots,
        degree=basis.degree,
        lam=lam,
        anchor0=anchor0,
        anchor1=anchor1,
        cv_scores=cv_scores,
        bins=table,
        spline=spline,
    )


def _checked_anchors(anchor0, anchor1) -> tuple[float, float | None]:
    """``(s(0), s(1) or None)``, each checked, s(1) no higher than s(0)."""
    anchor0 = check_anchor(anchor0, "anchor0")
    anchor1 = fixed_anchor1(anchor1)
    if anchor1 is not None and anchor1 > anchor0:
        raise ValueError(
            f"anchor1 ({anchor1}) exceeds anchor0 ({anchor0}): the curve is non-increasing"
        )
    return anchor0, anchor1


def _cross_validated_lambda(
    basis, idx, dv, y, group_codes, used, anchor0, anchor1, n_bins, n_folds, rng, weights
) -> tuple[float, np.ndarray | None]:
    """The P-spline's penalty by ``n_folds``-fold CV (:func:`_select_lambda`) over folds of
    samples or of whole groups, and its scores; with fewer than 2 units, the smoothest candidate
    (scores None)."""
    n_units = len(y) if group_codes is None else int(group_codes.max()) + 1
    k = min(int(n_folds), n_units)
    if k < 2:
        # Too few units to cross-validate: take the smoothest candidate, which bridges the
        # anchor and the data with a near-straight monotone line.
        return LAMBDA_GRID[-1], None
    unit_fold = _folds(n_units, k, rng)
    fold = unit_fold if group_codes is None else unit_fold[group_codes]
    return _select_lambda(
        basis, idx, dv, y, fold, used, anchor0, anchor1, LAMBDA_GRID, n_bins, weights
    )
