"""Straightforward per-image wavelet VIF, the yardstick for the fast ``vcrbench.vif``.

A plain, readable restatement of the algorithm of Kumar's Python port (github abhinaukumar/vif,
MIT, ``vif_utils.vif(ref, dist)``), which the VCR paper used, and of Sheikh's MATLAB ``vifvec``
(variant ``"vifvec"``). It builds the full steerable pyramid with pyrtools'
``SteerablePyramidSpace`` and walks the sub-bands one by one, as those programs do. It shares no
code with ``vcrbench.vif`` on purpose: agreement between the two is evidence, not tautology.

Algorithm (Sheikh & Bovik 2006, as the port computes it), for reference image ``x`` and distorted
image ``y``, both greyscale on the 0-255 scale:

1. Steerable pyramid, height 4, order 5 (6 orientations, sp5 filters, 'reflect1' edges). Use
   orientations 0 and 3 of each level: 8 sub-bands. MATLAB's ``vifvec`` lists them coarsest level
   first, and so does the port; with sub-band position ``i`` in that list, ``lev = ceil((i+1)/2)``
   and the channel-estimation window is ``2**lev + 1`` (3 at the coarsest level, 17 at the finest).
2. Crop each sub-band to a multiple of M = 3 on both sides.
3. GSM model of the reference sub-band: the covariance C_U of all 3x3 neighbourhoods (stride 1);
   its eigenvalues (clamped at 1e-15); per non-overlapping 3x3 block the multiplier
   ``s = u^T C_U^-1 u / 9``.
4. Distortion channel per 3x3 block: local moments in a ``win x win`` window centred on the block
   (reflect padding), gain ``g = cov / var_x`` and noise ``sigma_v^2 = var_y - g cov`` with the
   corner cases of the port (no reference energy, no distorted energy, negative gain).
5. Drop ``ceil((win-1)/2/3)`` blocks on every side, then per sub-band
   ``num = sum_j mean log(1 + g^2 s lambda_j / (sigma_v^2 + sigma_n^2))`` and
   ``den = sum_j mean log(1 + s lambda_j / sigma_n^2)``.
6. ``kumar``: sigma_n^2 = 0.1, ``VIF = mean(num + 1e-4) / mean(den + 1e-4)``.
   ``vifvec``: sigma_n^2 = 0.4, means replaced by sums over blocks, covariance normalised by the
   number of neighbourhoods, no guard: ``VIF = sum(num) / sum(den)``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from pyrtools.pyramids import SteerablePyramidSpace

M = 3
TOL = 1e-15


def subband_list(pyr) -> list[np.ndarray]:
    """The 8 sub-bands the port uses, coarsest level first: (3,3), (3,0), (2,3), ..., (0,0)."""
    bands = []
    for level in reversed(range(4)):
        bands.append(pyr.pyr_coeffs[(level, 3)])
        bands.append(pyr.pyr_coeffs[(level, 0)])
    return bands


def crop_to_blocks(band: np.ndarray) -> np.ndarray:
    h, w = band.shape
    return band[: (h // M) * M, : (w // M) * M]


def neighbourhoods(band: np.ndarray, step: int) -> np.ndarray:
    """All 3x3 neighbourhoods whose top-left corner lies on a ``step`` grid, one per row (P, 9)."""
    return sliding_window_view(band, (M, M))[::step, ::step].reshape(-1, M * M)


def gsm_model(band: np.ndarray, cov_ddof: int, clamp: bool):
    """Eigenvalues of the neighbourhood covariance and the multiplier s of each 3x3 block."""
    all_vectors = neighbourhoods(band, 1)
    cov = np.cov(all_vectors, rowvar=False, ddof=cov_ddof)
    eigenvalues, eigenvectors = np.linalg.eigh(cov)
    if clamp:
        eigenvalues = np.maximum(eigenvalues, TOL)
    cov = eigenvectors @ np.diag(eigenvalues) @ eigenvectors.T
    blocks = neighbourhoods(band, M)
    s = np.einsum("pi,ij,pj->p", blocks, np.linalg.inv(cov), blocks) / (M * M)
    return eigenvalues, s.reshape(band.shape[0] // M, band.shape[1] // M)


def window_means(band: np.ndarray, win: int) -> np.ndarray:
    """Mean over the ``win x win`` window centred on every 3x3 block (reflected edges), from a
    summed-area table."""
    pad = (win - M) // 2
    padded = np.pad(band, pad, mode="reflect")
    table = np.zeros((padded.shape[0] + 1, padded.shape[1] + 1))
    table[1:, 1:] = padded.cumsum(0).cumsum(1)
    n_r, n_c = band.shape[0] // M, band.shape[1] // M

    def corner(r0, c0):  # the table at window corners r0 + 3i, c0 + 3j
        return table[r0 : r0 + M * n_r : M, c0 : c0 + M * n_c : M]

    sums = corner(win, win) - corner(0, win) - corner(win, 0) + corner(0, 0)
    return sums / (win * win)


def channel_estimate(ref: np.ndarray, dist: np.ndarray, win: int):
    """Gain g and noise variance sigma_v^2 of each 3x3 block, from a ``win``-wide window."""
    mx, my = window_means(ref, win), window_means(dist, win)
    var_x = window_means(ref * ref, win) - mx * mx
    var_y = window_means(dist * dist, win) - my * my
    cov = window_means(ref * dist, win) - mx * my
    cov = np.where((var_x < 0) | (var_y < 0), 0.0, cov)
    var_x, var_y = np.maximum(var_x, 0.0), np.maximum(var_y, 0.0)
    g = cov / (var_x + TOL)
    sv = var_y - g * cov
    no_ref = var_x < TOL  # no reference signal: everything in the distorted block is noise
    g, sv = np.where(no_ref, 0.0, g), np.where(no_ref, var_y, sv)
    no_dist = var_y < TOL  # nothing left in the distorted block
    g, sv = np.where(no_dist, 0.0, g), np.where(no_dist, 0.0, sv)
    flipped = g < 0  # a sign flip carries no information
    g, sv = np.where(flipped, 0.0, g), np.where(flipped, var_y, sv)
    return g, np.maximum(sv, TOL)


def channel_estimate_matlab(ref: np.ndarray, dist: np.ndarray, win: int):
    """MATLAB ``vifsub_est_M``: the same regression on sums over the window (``tol`` applies to
    sums, and var(y) is replaced by the sum of squares in two corner cases); no covariance reset."""
    area = win * win
    mx, my = window_means(ref, win), window_means(dist, win)
    cov = area * (window_means(ref * dist, win) - mx * my)
    ss_x = np.maximum(area * (window_means(ref * ref, win) - mx * mx), 0.0)
    ss_y = np.maximum(area * (window_means(dist * dist, win) - my * my), 0.0)
    g = cov / (ss_x + TOL)
    vv = (ss_y - g * cov) / area
    g, vv = np.where(ss_x < TOL, 0.0, g), np.where(ss_x < TOL, ss_y, vv)
    g, vv = np.where(ss_y < TOL, 0.0, g), np.where(ss_y < TOL, 0.0, vv)
    vv = np.where(g < 0, ss_y, vv)
    g = np.maximum(g, 0.0)
    return g, np.where(vv <= TOL, TOL, vv)


def vif_reference(ref: np.ndarray, dist: np.ndarray, variant: str = "kumar") -> float:
    """VIF of one greyscale pair (reference first), as the port (``kumar``) or ``vifvec`` does."""
    if variant == "kumar":
        sigma_nsq, cov_ddof, clamp, reduce = 0.1, 1, True, np.mean
    elif variant == "vifvec":
        sigma_nsq, cov_ddof, clamp, reduce = 0.4, 0, False, np.sum
    else:
        raise ValueError(f"unknown variant {variant!r}")
    ref = np.asarray(ref, dtype=np.float64)
    dist = np.asarray(dist, dtype=np.float64)
    ref_bands = subband_list(SteerablePyramidSpace(ref, 4, 5, "reflect1"))
    dist_bands = subband_list(SteerablePyramidSpace(dist, 4, 5, "reflect1"))
    nums, dens = [], []
    for i, (yr, yd) in enumerate(zip(ref_bands, dist_bands, strict=True)):
        yr, yd = crop_to_blocks(yr), crop_to_blocks(yd)
        win = 2 ** math.ceil((i + 1) / 2) + 1
        estimate = channel_estimate if variant == "kumar" else channel_estimate_matlab
        g, sv = estimate(yr, yd, win)
        eigenvalues, s = gsm_model(yr, cov_ddof, clamp)
        off = math.ceil((win - 1) / 2 / M)
        g, sv, s = (a[off:-off, off:-off] for a in (g, sv, s))
        num = sum(reduce(np.log(1 + g * g * s * lam / (sv + sigma_nsq))) for lam in eigenvalues)
        den = sum(reduce(np.log(1 + s * lam / sigma_nsq)) for lam in eigenvalues)
        nums.append(num)
        dens.append(den)
    nums, dens = np.array(nums), np.array(dens)
    if variant == "kumar":
        return float(np.mean(nums + 1e-4) / np.mean(dens + 1e-4))
    return float(np.sum(nums) / np.sum(dens))
