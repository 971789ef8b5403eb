"""The quantile smoothing spline the VCR paper cites (Koenker, Ng & Portnoy 1994), as a linear
programme.

Koenker, Ng & Portnoy minimise Σ w_j |P_j − g(v_j)| + λ · TV(g′): L1 fidelity (the median,
τ = 0.5) and an L1 roughness penalty, the total variation of the derivative. Its solutions are
linear splines, so the curve here is piecewise linear with knots at the bin edges j / (M − 1)
(its B-spline coefficients are its values at the knots): TV(g′) is the sum of the absolute slope
changes at the knots, and monotonicity, the range [0, s(0)] and the anchors are constraints on the
coefficients themselves. The fidelity and the penalty are linear in positive and negative parts,
so the fit is one linear programme, solved by :func:`scipy.optimize.linprog` with HiGHS, as R's
``cobs`` (Ng & Maechler 2007) solves the same problem.

The penalty λ is chosen as ``cobs`` chooses it, by the Schwarz-type information criterion of
Koenker, Ng & Portnoy (1994, §4): SIC(λ) = log(Σ w_j |r_j|) + p_λ log(m) / (2m), with m the bins
fitted and p_λ the number of bins the curve interpolates (|r_j| ≤ 1e-7), the effective dimension
of the fit; among ties the smoothest wins.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

#: Candidate penalties of the quantile spline (fidelity weights sum to 1; λ multiplies TV(g′),
#: whose size for a curve falling by 1 over a tenth of the range is about 20): 10^-6 … 10^1.
QUANTILE_LAMBDA_GRID = tuple(float(10.0**e) for e in np.arange(-6.0, 1.01, 0.5))
#: A residual at most this large counts as interpolated in the SIC's effective dimension.
INTERPOLATED = 1e-7
#: A tiny reward for a higher right end, which picks the flattest of equally good fits (e.g.
#: where no bin constrains the curve); it moves a fitted value by far less than 1e-6.
_TIE_BREAK = 1e-9


def fit_quantile(
    basis,
    Bx: np.ndarray,
    rate: np.ndarray,
    weight: np.ndarray,
    lam: float,
    anchor0: float,
    anchor1: float | None,
) -> np.ndarray:
    """Coefficients of the anchored monotone linear quantile spline (``basis`` of degree 1).

    Minimises Σ weight_j |rate_j − (Bx c)_j| + lam · TV(g′) subject to c_0 = anchor0, c_k ≥ c_{k+1},
    c_last ≥ 0 (or = anchor1) and c ≤ anchor0.
    """
    # here, not at the top: scipy.optimize is most of a second of a figure job's start-up
    # (lazy_scipy)
    from scipy import sparse
    from scipy.optimize import linprog

    if basis.degree != 1:
        raise ValueError(
            f"the quantile spline is linear (degree 1), got a basis of degree {basis.degree}"
        )
    n = basis.n_basis
    m = len(rate)
    h = 1.0 / (n - 1)
    D2 = sparse.csr_matrix(basis.D2)  # c_{k+1} − 2 c_k + c_{k−1}: the slope change times h
    k = D2.shape[0]
    # Variables: c (n), fidelity r+ and r- (m each), penalty d+ and d- (k each).
    cost = np.r_[np.zeros(n), weight, weight, np.full(2 * k, lam / h)]
    cost[n - 1] -= _TIE_BREAK
    eye_m, eye_k = sparse.identity(m), sparse.identity(k)
    A_eq = sparse.vstack(
        [
            sparse.hstack([sparse.csr_matrix(Bx), eye_m, -eye_m, sparse.csr_matrix((m, 2 * k))]),
            sparse.hstack([D2, sparse.csr_matrix((k, 2 * m)), -eye_k, eye_k]),
        ]
    ).tocsc()
    b_eq = np.r_[rate, np.zeros(k)]
    # Non-increasing: c_{k+1} − c_k <= 0.
    A_ub = sparse.hstack(
        [sparse.csr_matrix(basis.D1), sparse.csr_matrix((n - 1, 2 * m + 2 * k))]
    ).tocsc()
    b_ub = np.zeros(n - 1)
    lower = 0.0 if anchor1 is None else anchor1
    bounds = [(lower, anchor0)] * n + [(0.0, None)] * (2 * m + 2 * k)
    bounds[0] = (anchor0, anchor0)
    if anchor1 is not None:
        bounds[n - 1] = (anchor1, anchor1)
    res = linprog(cost, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(
            f"quantile spline fit: HiGHS did not solve the linear programme ({res.message})"
        )
    coef = res.x[:n]
    return np.minimum.accumulate(np.clip(coef, lower, anchor0))


def sic(Bx: np.ndarray, rate: np.ndarray, weight: np.ndarray, coef: np.ndarray) -> float:
    """Koenker, Ng & Portnoy's SIC of a fit: log of the weighted L1 fidelity plus
    p log(m) / (2m), p the interpolated bins (the effective dimension), m the bins."""
    m = len(rate)
    if m == 0:
        return 0.0
    resid = np.abs(rate - Bx @ coef)
    fidelity = max(float(weight @ resid), 1e-12)
    p = int(np.sum(resid <= INTERPOLATED))
    return math.log(fidelity) + p * math.log(m) / (2 * m) if m > 1 else math.log(fidelity)


def select_lambda_sic(
    basis,
    Bx: np.ndarray,
    rate: np.ndarray,
    weight: np.ndarray,
    anchor0: float,
    anchor1: float | None,
    lam_grid: Sequence[float] = QUANTILE_LAMBDA_GRID,
) -> tuple[float, np.ndarray]:
    """The penalty of ``lam_grid`` with the smallest SIC (the smoothest of near-ties), and the
    SIC of every candidate."""
    scores = np.array(
        [
            sic(Bx, rate, weight, fit_quantile(basis, Bx, rate, weight, lam, anchor0, anchor1))
            for lam in lam_grid
        ]
    )
    best = scores.min()
    near = np.flatnonzero(scores <= best + 1e-12 * max(1.0, abs(best)))
    return float(lam_grid[int(near.max())]), scores
