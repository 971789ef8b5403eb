"""VIF from the sub-bands: GSM model of the reference, distortion channel, information.

Per sub-band, with the blocks the port drops at the border never computed (their windows would
need padding; the port pads, then drops them):

- GSM: covariance C of all 3x3 neighbourhoods of the reference band x, its eigenvalues lambda_j
  (clamped at 1e-15) and, per 3x3 block u, s = u^T C^-1 u / 9.
- Channel y = g x + v per block, from means over a ``win x win`` window centred on the block.
- Information: num = sum_j E log(1 + g^2 s lambda_j / (sigma_v^2 + sigma_n^2)),
  den = sum_j E log(1 + s lambda_j / sigma_n^2), E the mean (port) or sum (MATLAB) over blocks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._kernels import DISPLACEMENTS, pair_table
from ._pyramid import HEIGHT, M, pyramid_bands

#: Variance below which a window counts as empty (the port's and MATLAB's ``tol``).
TOL = 1e-15


@dataclass(frozen=True)
class Variant:
    """Constants that distinguish the port (``kumar``) from MATLAB's ``vifvec``."""

    name: str
    sigma_nsq: float  # HVS noise variance
    per_block_mean: bool  # information averaged over blocks (True) or summed (False)
    guard: float  # added to every sub-band's num and den before the ratio
    cov_ddof: int  # neighbourhood covariance normalised by P - ddof
    window_sums: bool  # MATLAB's tolerance and corner cases on window sums, not variances


VARIANTS = {
    "kumar": Variant("kumar", 0.1, True, 1e-4, 1, False),
    "vifvec": Variant("vifvec", 0.4, False, 0.0, 0, True),
}


def window(level: int) -> int:
    """Channel-estimation window of a level (0 = finest): 17, 9, 5, 3, as in the port.

    The port lists its sub-bands coarsest first and sizes the window by the position in that list,
    so the finest level gets the widest window.
    """
    return 2 ** (HEIGHT - level) + 1


def border(level: int) -> int:
    """Blocks dropped on each side of a level's maps (the port's ``offset``)."""
    return math.ceil((window(level) - 1) / 2 / M)


# --------------------------------------------------------------------------- array versions
# of the two statistics the numpy back-end computes with compiled kernels (``_kernels``).


def _window_sums(maps, win: int, off: int, axis: int):
    """Sums over ``win`` samples centred on each inner 3-block along ``axis`` (-2 or -1).

    A window is a few whole 3-blocks plus at most one sample at each end: block sums first, then
    a handful of shifted additions, all on strided views.
    """
    nb = maps.shape[axis] // M - 2 * off
    first = M * off - (win - M) // 2  # first sample of the first inner window
    lead = -first % M
    n_whole, trail = divmod(win - lead, M)
    j0 = (first + lead) // M  # first whole block of the first window

    def take(a, start, step, count):
        sl = slice(start, start + step * (count - 1) + 1, step)
        return a[..., sl, :] if axis == -2 else a[..., sl]

    n_blocks = nb + n_whole - 1
    blocks = take(maps, M * j0, M, n_blocks)
    for t in range(1, M):
        blocks = blocks + take(maps, M * j0 + t, M, n_blocks)
    out = take(blocks, 0, 1, nb)
    for j in range(1, n_whole):
        out = out + take(blocks, j, 1, nb)
    for t in range(lead):
        out = out + take(maps, first + t, M, nb)
    for t in range(trail):
        out = out + take(maps, M * (j0 + n_whole) + t, M, nb)
    return out


def window_moments(xp, bands, win: int, off: int):
    """Means of x, e, x^2, e^2, x e over the window of every inner block, float64.

    ``bands`` (..., h, w) complex: x + i e.
    """
    x = xp.cast(bands.real, xp.float64)
    e = xp.cast(bands.imag, xp.float64)
    area = float(win * win)

    def box(a):
        return _window_sums(_window_sums(a, win, off, -2), win, off, -1) / area

    return box(x), box(e), box(x * x), box(e * e), box(x * e)


def neighbourhood_moments(xp, bands):
    """Sums of the 9 components, (..., 9), and of their products, (..., 9, 9), over all 3x3
    neighbourhoods (stride 1) of x, the real part of ``bands``; float64.

    One dot product over the whole band per displacement d = b - a (13 of them), then the
    border rows and columns that each pair's rectangle of positions leaves out are subtracted.
    """
    band = xp.cast(bands.real, xp.float64)
    h, w = band.shape[-2:]
    wp = w + 2  # 2 zero columns: a partner beyond a row's end (or before its start) reads zero
    z = xp.zeros(band.shape[:-2] + (h + 3, wp), xp.float64)
    z[..., :h, :w] = band
    z = z.reshape(band.shape[:-2] + ((h + 3) * wp,))
    n = h * wp
    shifts = np.array([dr * wp + dc for dr, dc in DISPLACEMENTS.tolist()])
    full = xp.stack([(z[..., :n] * z[..., k : k + n]).sum(-1) for k in shifts], axis=-1)
    rows = np.array([0, 1, h - 2, h - 1])
    cols = np.array([0, 1, w - 2, w - 1])
    row_idx = rows[:, None] * wp + np.arange(wp)  # (4, wp)
    col_idx = np.arange(h)[None, :] * wp + cols[:, None]  # (4, h)
    corner_idx = rows[:, None] * wp + cols[None, :]  # (4, 4)

    def gather(idx):
        return xp.take(z, idx.ravel(), axis=-1).reshape(z.shape[:-1] + idx.shape)

    def partner_products(idx):  # (..., 13, *idx.shape): x[q] x[q + d]
        moved = gather(idx[None] + shifts.reshape((-1,) + (1,) * idx.ndim))
        return gather(idx)[..., None, :, :] * moved

    row_dot = partner_products(row_idx).sum(-1)  # (..., 13, 4)
    col_dot = partner_products(col_idx).sum(-1)  # (..., 13, 4)
    corner = partner_products(corner_idx)  # (..., 13, 4, 4)
    plain_rows, plain_cols = gather(row_idx).sum(-1), gather(col_idx).sum(-1)
    plain_corner = gather(corner_idx)
    total = z.sum(-1)

    # Rows / columns each start position a leaves out, as positions in (0, 1, h-2, h-1).
    excluded = np.array([(2, 3), (0, 3), (0, 1)])
    table = pair_table().reshape(81, 2)
    start, d_idx = table[:, 0], table[:, 1]
    ex_r, ex_c = excluded[start // M], excluded[start % M]
    second = full[..., d_idx]
    for i in range(2):
        second = second - row_dot[..., d_idx, ex_r[:, i]] - col_dot[..., d_idx, ex_c[:, i]]
        for j in range(2):
            second = second + corner[..., d_idx, ex_r[:, i], ex_c[:, j]]
    own_r, own_c = excluded[np.arange(9) // M], excluded[np.arange(9) % M]
    sums = xp.stack([total] * 9, axis=-1)
    for i in range(2):
        sums = sums - plain_rows[..., own_r[:, i]] - plain_cols[..., own_c[:, i]]
        for j in range(2):
            sums = sums + plain_corner[..., own_r[:, i], own_c[:, j]]
    return sums, second.reshape(second.shape[:-1] + (9, 9))


def band_statistics(xp, bands, win: int, off: int):
    """Neighbourhood sums and products of x, and window means of x, e, x^2, e^2, x e stacked
    (..., 5, nb_r, nb_c)."""
    sums, second = neighbourhood_moments(xp, bands)
    return sums, second, xp.stack(window_moments(xp, bands, win, off), axis=-3)


def band_information(xp, moments, s, lam, win: int, variant: Variant):
    """Per-band ``num`` and ``den`` from the window means (..., 5, nb_r, nb_c)."""
    means = tuple(moments[..., q, :, :] for q in range(5))
    g, sv = channel(xp, means, win, variant)
    return information(xp, g, sv, s, lam, variant)


# --------------------------------------------------------------------------- the model


def gsm_multipliers(xp, bands, off: int, lam, vec):
    """s = u^T C^-1 u / 9 (..., nb_r, nb_c) of every inner 3x3 block u of x = bands.real, from
    C's eigenvalues (..., 9) and eigenvectors (..., 9, 9)."""
    h, w = bands.shape[-2:]
    o = M * off
    inner = bands.real[..., o : h - o, o : w - o]
    nb_r, nb_c = inner.shape[-2] // M, inner.shape[-1] // M
    proj = xp.blocks(inner, nb_r, nb_c) @ vec  # block vectors in the eigenbasis of C
    s = ((proj * proj) / lam[..., None, :]).sum(-1) / (M * M)
    return s.reshape(s.shape[:-1] + (nb_r, nb_c))


def gsm(xp, bands, sums, second, off: int, variant: Variant):
    """Eigenvalues (..., 9) of the reference's neighbourhood covariance, and the GSM multiplier
    s (..., nb_r, nb_c) of every inner 3x3 block."""
    h, w = bands.shape[-2:]
    count = (h - M + 1) * (w - M + 1)
    cov = (second - sums[..., :, None] * sums[..., None, :] / count) / (count - variant.cov_ddof)
    lam, vec = xp.eigh(cov)
    lam = xp.maximum(lam, TOL)  # the port's clamp; also keeps C invertible
    return lam, xp.gsm_multipliers(bands, off, lam, vec)


def channel(xp, moments, win: int, variant: Variant):
    """Gain g and distortion-noise variance sigma_v^2 of every inner 3x3 block.

    ``moments``: window means of x, e, x^2, e^2, x e, with e = y - x. With v = var(x),
    c = cov(x, e), w = var(e) in the window, the port's ``g = cov(x, y) / (v + tol)`` and
    ``sigma_v^2 = var(y) - g cov(x, y)`` are ``g = (v + c) / (v + tol)`` and
    ``sigma_v^2 = w - c^2 / (v + tol) + tol (v + 2c) / (v + tol)``: the same numbers, without
    subtracting nearly equal large ones when y is close to x. MATLAB's ``vifvec`` applies ``tol``
    to sums over the window and, in two corner cases, uses the sum var(y) * area where the port
    uses var(y); ``window_sums`` reproduces that.
    """
    mx, me, mxx, mee, mxe = moments
    v = xp.maximum(mxx - mx * mx, 0.0)
    w = xp.maximum(mee - me * me, 0.0)
    c = mxe - mx * me
    vy = xp.maximum(v + 2 * c + w, 0.0)  # var(y)
    area = float(win * win)
    t = TOL / area if variant.window_sums else TOL
    scale = area if variant.window_sums else 1.0
    g = (v + c) / (v + t)
    sv = w - c * c / (v + t) + t * (v + 2 * c) / (v + t)
    no_ref = v < t  # no reference signal: all of the distorted block is noise
    g, sv = xp.where(no_ref, 0.0, g), xp.where(no_ref, scale * vy, sv)
    no_dist = vy < t  # nothing left of the block
    g, sv = xp.where(no_dist, 0.0, g), xp.where(no_dist, 0.0, sv)
    flipped = g < 0  # a sign flip carries no information
    g, sv = xp.where(flipped, 0.0, g), xp.where(flipped, scale * vy, sv)
    return g, xp.maximum(sv, TOL)


def information(xp, g, sv, s, lam, variant: Variant):
    """Per-band ``num`` and ``den`` (...,), from maps (..., nb_r, nb_c) and eigenvalues (..., 9).

    sum_j log(1 + a lambda_j) is taken as the logarithm of products of three factors: the same
    value with a third of the logarithms, and no overflow in float64.
    """
    flat = g.shape[:-2] + (-1,)
    g, sv, s = g.reshape(flat), sv.reshape(flat), s.reshape(flat)
    sn = variant.sigma_nsq
    a = g * g * s / (sv + sn)
    b = s / sn
    num = den = 0.0
    for j0 in range(0, 9, 3):
        pa = pb = 1.0
        for j in range(j0, j0 + 3):
            lj = lam[..., j : j + 1]
            pa = pa * (1.0 + a * lj)
            pb = pb * (1.0 + b * lj)
        num = num + xp.log(pa)
        den = den + xp.log(pb)
    if variant.per_block_mean:
        return num.mean(-1), den.mean(-1)
    return num.sum(-1), den.sum(-1)


def vif_batch(xp, ref, dist, variant: Variant):
    """VIF (n,) float64 of distorted images ``dist`` against references ``ref`` (n, H, W)."""
    # The pyramid gets x - mean(x) + i (e - mean(e)), e = y - x, in float64 (float32 moved Δv by
    # up to 1e-4): the bands ignore a constant (the band filters sum to ~1e-17), a flat reference
    # gives bands of exactly 0, and the FFT's rounding error, which scales with the signal's
    # energy, is smaller.
    nums, dens = [], []
    for level, bands in enumerate(pyramid_bands(xp, ref, dist, xp.complex128)):
        win, off = window(level), border(level)
        sums, second, moments = xp.band_statistics(bands, win, off)
        lam, s = gsm(xp, bands, sums, second, off, variant)
        num, den = xp.information(moments, s, lam, win, variant)
        nums.append(num)
        dens.append(den)
    num = (xp.concat(nums, axis=-1) + variant.guard).sum(-1)  # over the 8 sub-bands
    den = (xp.concat(dens, axis=-1) + variant.guard).sum(-1)
    no_info = den == 0  # vifvec with a flat reference: 0 / 0, defined as no loss
    return xp.where(no_info, 1.0, num / xp.where(no_info, 1.0, den))
