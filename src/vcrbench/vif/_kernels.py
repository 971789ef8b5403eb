"""Compiled loops (numba) for the numpy back-end: the steps that numpy would do in many passes.

Bands are complex: the real part is a band of the reference x, the imaginary part the same band
of the difference e = y - x (see ``_pyramid``). Sums accumulate in float64. Inner loops run over
1-D slices that start at the same column, so that LLVM vectorises them. The array-operation
equivalents, used by the torch back-end, are in ``_pyramid`` and ``_stats``.
"""

from __future__ import annotations

import numba
import numpy as np

#: Displacements d = b - a between the 3x3 neighbourhood positions a, b, one of each +-d pair.
DISPLACEMENTS = np.array([(0, 0), (0, 1), (0, 2)] + [(r, c) for r in (1, 2) for c in range(-2, 3)])


def pair_table() -> np.ndarray:
    """(9, 9, 2): for positions a, b (row-major in the 3x3 neighbourhood), the position the sum
    runs from (a or b) and the index of the displacement between them in ``DISPLACEMENTS``."""
    index = {tuple(d): i for i, d in enumerate(DISPLACEMENTS.tolist())}
    table = np.zeros((9, 9, 2), dtype=np.int64)
    for a in range(9):
        for b in range(9):
            d = (b // 3 - a // 3, b % 3 - a % 3)
            if d in index:
                table[a, b] = (a, index[d])
            else:
                table[a, b] = (b, index[(-d[0], -d[1])])
    return table


@numba.njit(cache=True, nogil=True)
def luma(rgb, weights, out):  # pragma: no cover - compiled
    """out = w0 R + w1 G + w2 B in float64 (the same operations, in the same order, as numpy's
    ``w0 * R + w1 * G + w2 * B``). rgb (P, 3) uint8, out (P,)."""
    w0, w1, w2 = weights[0], weights[1], weights[2]
    for i in range(rgb.shape[0]):
        out[i] = (
            w0 * np.float64(rgb[i, 0]) + w1 * np.float64(rgb[i, 1]) + w2 * np.float64(rgb[i, 2])
        )


@numba.njit(cache=True, nogil=True)
def _reflected(i, n, r, length):  # pragma: no cover - compiled
    """Source sample of padded index i: the signal (0 <= i < n), its reflection about the last
    sample (n <= i < n + r), the wrapped-around reflection about sample 0 (length - r <= i), or
    -1 (zero padding)."""
    if i < n:
        return i
    if i < n + r:
        return 2 * n - 2 - i
    if i >= length - r:
        return length - i
    return -1


@numba.njit(cache=True, nogil=True)
def reflect_padded(re, im, r, out, ref_mean, diff_mean, first):  # pragma: no cover - compiled
    """out[k] (L, W) complex: re[k] + i im[k] (h, w) at the origin, ``r`` samples reflected
    about the edge samples after the end and, wrapping around, before the start; zeros elsewhere.

    With ``first``, re is the reference x and im the distorted image y, and the image written is
    (x - ref_mean[k]) + i (y - x - diff_mean[k]).
    """
    n_img, h, w = re.shape
    lh, lw = out.shape[1], out.shape[2]
    a = np.empty(w)
    b = np.empty(w)
    for k in range(n_img):
        for i in range(lh):
            src = _reflected(i, h, r, lh)
            row = out[k, i]
            if src < 0:
                row[:] = 0.0
                continue
            rr = re[k, src]
            ri = im[k, src]
            if first:
                for j in range(w):
                    a[j] = rr[j] - ref_mean[k]
                    b[j] = (ri[j] - rr[j]) - diff_mean[k]
            else:
                for j in range(w):
                    a[j] = rr[j]
                    b[j] = ri[j]
            for j in range(w):
                row[j] = complex(a[j], b[j])
            for j in range(w, lw):
                sj = _reflected(j, w, r, lw)
                row[j] = complex(a[sj], b[sj]) if sj >= 0 else 0.0


@numba.njit(cache=True, nogil=True)
def filter_bands(spec, band_spec, out):  # pragma: no cover - compiled
    """out[k, b] = spec[k] * band_spec[b]: (K, L, W) x (2, L, W) -> (K, 2, L, W), complex."""
    n_img, lh, lw = spec.shape
    for k in range(n_img):
        for i in range(lh):
            s = spec[k, i]
            for b in range(band_spec.shape[0]):
                h = band_spec[b, i]
                o = out[k, b, i]
                for j in range(lw):
                    o[j] = s[j] * h[j]


@numba.njit(cache=True, nogil=True)
def filter_decimated(spec, lo_spec, out):  # pragma: no cover - compiled
    """Spectrum of c[::2, ::2], where c has the spectrum spec * lo_spec: the four aliases of every
    frequency, added. (K, L, W) -> (K, L/2, W/2), complex."""
    n_img, lh, lw = spec.shape
    hh = lh // 2
    hw = lw // 2
    for k in range(n_img):
        for i in range(hh):
            s0 = spec[k, i]
            s1 = spec[k, i + hh]
            h0 = lo_spec[i]
            h1 = lo_spec[i + hh]
            o = out[k, i]
            for j in range(hw):
                o[j] = 0.25 * (
                    (s0[j] * h0[j] + s1[j] * h1[j])
                    + (s0[j + hw] * h0[j + hw] + s1[j + hw] * h1[j + hw])
                )


@numba.njit(cache=True, nogil=True)
def _window_sums(acc, first, win, nb_c, blocks, out):  # pragma: no cover - compiled
    """out[j] = acc[first + 3j : first + 3j + win].sum() for j < nb_c.

    The window is a run of whole 3-column blocks plus at most one column at each end, so sums
    of blocks (``blocks``, scratch) and a few shifted additions give every j independently.
    """
    lead = (-first) % 3
    n_whole = (win - lead) // 3
    trail = win - lead - 3 * n_whole
    j0 = (first + lead) // 3
    n_blocks = nb_c + n_whole - 1
    for b in range(n_blocks):
        c = 3 * (j0 + b)
        blocks[b] = acc[c] + acc[c + 1] + acc[c + 2]
    for j in range(nb_c):
        s = blocks[j]
        for m in range(1, n_whole):
            s += blocks[j + m]
        if lead:
            s += acc[first + 3 * j]
        if trail:
            s += acc[first + lead + 3 * n_whole + 3 * j]
        out[j] = s


@numba.njit(cache=True, nogil=True)
def band_statistics(
    bands, win, off, displacements, pairs, sums, second, moments
):  # pragma: no cover
    """Neighbourhood moments of x and window moments of x and e, for every band.

    bands: (K, h, w) complex, x + i e.
    sums (K, 9), second (K, 9, 9): sums of the 9 components of all 3x3 neighbourhoods of x
        (stride 1) and of their products. The sum of u_a u_b runs over x[q] x[q + d] (d = b - a)
        for q in the rectangle a + [0, h - 2) x [0, w - 2), a the pair's start (``pair_table``).
        Rows 2 .. h-3 belong to every rectangle: their products are summed down the columns once
        per displacement; the 4 border rows are kept apart; each pair then sums its columns.
    moments (K, 5, nb_r, nb_c): sums of x, e, x^2, e^2, x e over the ``win x win`` window
        centred on every inner 3x3 block (nb = h // 3 - 2 off). Inner windows lie inside the
        band; the window slides 3 rows at a time (add the entering rows, subtract the leaving).
    """
    n_img, h, w = bands.shape
    n_d = displacements.shape[0]
    nb_r = h // 3 - 2 * off
    nb_c = w // 3 - 2 * off
    first = 3 * off - (win - 3) // 2
    x = np.empty((h, w))
    e = np.empty((h, w))
    core = np.empty((n_d, w))  # column sums over rows 2 .. h-3 of x[r, c] x[r + dr, c + dc]
    edge = np.empty((n_d, 4, w))  # rows 0, 1, h-2, h-1 of the same products
    core_x = np.empty(w)
    acc = np.empty((5, w))
    blocks = np.empty(w)
    for k in range(n_img):
        _split_band(bands[k], x, e)
        # -- neighbourhood moments of x
        _neighbour_products(x, displacements, core, edge)
        _neighbourhood_sums(x, pairs, core, edge, core_x, sums[k], second[k])
        # -- window moments of x and e
        _window_moments(x, e, win, first, nb_r, nb_c, acc, blocks, moments[k])


@numba.njit(cache=True, nogil=True)
def _split_band(band, x, e):  # pragma: no cover - compiled
    """x, e = the real and imaginary parts of ``band`` (h, w)."""
    h, w = band.shape
    for r in range(h):
        xr = x[r]
        er = e[r]
        src = band[r]
        for c in range(w):
            xr[c] = src[c].real
            er[c] = src[c].imag


@numba.njit(cache=True, nogil=True)
def _neighbour_products(x, displacements, core, edge):  # pragma: no cover - compiled
    """Products x[r, c] x[r + dr, c + dc] for every displacement d: ``core[d]`` their column
    sums over rows 2 .. h-3, ``edge[d]`` the products in rows 0, 1, h-2, h-1 (zero elsewhere)."""
    h, w = x.shape
    n_d = displacements.shape[0]
    edge_rows = (0, 1, h - 2, h - 1)
    core[:] = 0.0
    edge[:] = 0.0
    for d in range(n_d):
        dr = displacements[d, 0]
        dc = displacements[d, 1]
        c_lo = max(0, -dc)
        c_hi = w - max(0, dc)
        n = c_hi - c_lo
        col = core[d, c_lo:c_hi]
        for r in range(2, h - 2):
            xa = x[r, c_lo:c_hi]
            xb = x[r + dr, c_lo + dc : c_hi + dc]
            for c in range(n):
                col[c] += xa[c] * xb[c]
        for i in range(4):
            r = edge_rows[i]
            if r + dr < h:
                xa = x[r, c_lo:c_hi]
                xb = x[r + dr, c_lo + dc : c_hi + dc]
                out = edge[d, i, c_lo:c_hi]
                for c in range(n):
                    out[c] = xa[c] * xb[c]


@numba.njit(cache=True, nogil=True)
def _neighbourhood_sums(x, pairs, core, edge, core_x, sums, second):  # pragma: no cover
    """sums (9,) and second (9, 9) of one band from x and its products (``_neighbour_products``):
    each position's and each pair's rectangle is its columns of the core rows plus the border
    rows inside it."""
    h, w = x.shape
    edge_rows = (0, 1, h - 2, h - 1)
    core_x[:] = 0.0
    for r in range(2, h - 2):
        xr = x[r]
        for c in range(w):
            core_x[c] += xr[c]
    for a in range(9):
        ar = a // 3
        ac = a % 3
        s = 0.0
        for c in range(ac, ac + w - 2):
            s += core_x[c]
        for i in range(4):
            r = edge_rows[i]
            if ar <= r < ar + h - 2:
                for c in range(ac, ac + w - 2):
                    s += x[r, c]
        sums[a] = s
    for a in range(9):
        for b in range(a, 9):
            start = pairs[a, b, 0]
            d = pairs[a, b, 1]
            sr = start // 3
            sc = start % 3
            s = 0.0
            for c in range(sc, sc + w - 2):
                s += core[d, c]
            for i in range(4):  # the border rows inside rows sr .. sr + h - 3
                r = edge_rows[i]
                if sr <= r < sr + h - 2:
                    for c in range(sc, sc + w - 2):
                        s += edge[d, i, c]
            second[a, b] = s
            second[b, a] = s


@numba.njit(cache=True, nogil=True)
def _window_moments(x, e, win, first, nb_r, nb_c, acc, blocks, moments):  # pragma: no cover
    """moments (5, nb_r, nb_c) of one band: sums of x, e, x^2, e^2, x e over each window, the
    column sums ``acc`` sliding down 3 rows at a time (add the entering rows, subtract the
    leaving), each row of windows summed across by ``_window_sums``."""
    w = x.shape[1]
    acc[:] = 0.0
    a0, a1, a2, a3, a4 = acc[0], acc[1], acc[2], acc[3], acc[4]  # 1-D rows: vectorised loops
    for r in range(first, first + win):
        xr = x[r]
        er = e[r]
        for c in range(w):
            a0[c] += xr[c]
            a1[c] += er[c]
            a2[c] += xr[c] * xr[c]
            a3[c] += er[c] * er[c]
            a4[c] += xr[c] * er[c]
    for i in range(nb_r):
        if i > 0:
            for t in range(3):
                r_in = first + 3 * (i - 1) + win + t
                r_out = first + 3 * (i - 1) + t
                xi = x[r_in]
                ei = e[r_in]
                xo = x[r_out]
                eo = e[r_out]
                for c in range(w):
                    a0[c] += xi[c] - xo[c]
                    a1[c] += ei[c] - eo[c]
                    a2[c] += xi[c] * xi[c] - xo[c] * xo[c]
                    a3[c] += ei[c] * ei[c] - eo[c] * eo[c]
                    a4[c] += xi[c] * ei[c] - xo[c] * eo[c]
        for q in range(5):
            _window_sums(acc[q], first, win, nb_c, blocks, moments[q, i])


@numba.njit(cache=True, nogil=True)
def gsm_multipliers(bands, off, lam, vec, out):  # pragma: no cover - compiled
    """out[k, i, j] = sum_m (v_m . u)^2 / lam_m / 9 = u^T C^-1 u / 9 for the 3x3 block u of
    x = bands.real at inner block (i, j) (``off`` blocks skipped on every side), with C's
    eigenvalues lam[k] (9,) and eigenvectors vec[k] (9, 9), columns. bands (K, h, w) complex,
    out (K, nb_r, nb_c). Squared projections keep s exact even when C is near singular.
    """
    n_img = bands.shape[0]
    nb_r = out.shape[1]
    nb_c = out.shape[2]
    planes = np.empty((9, nb_c))  # component a of every block of one block row
    proj = np.empty(nb_c)
    for k in range(n_img):
        for i in range(nb_r):
            for a in range(9):
                src = bands[k, 3 * (off + i) + a // 3]
                pa = planes[a]
                c0 = 3 * off + a % 3
                for j in range(nb_c):
                    pa[j] = src[c0 + 3 * j].real
            o = out[k, i]
            o[:] = 0.0
            for m in range(9):
                proj[:] = 0.0
                for a in range(9):
                    v = vec[k, a, m]
                    pa = planes[a]
                    for j in range(nb_c):
                        proj[j] += v * pa[j]
                scale = 1.0 / (9.0 * lam[k, m])
                for j in range(nb_c):
                    o[j] += proj[j] * proj[j] * scale
