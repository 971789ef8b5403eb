"""The 8 steerable-pyramid sub-bands VIF uses, by FFT, equal to pyrtools' SteerablePyramidSpace.

pyrtools builds the pyramid (height 4, sp5 filters, 'reflect1' edges) as a chain of spatial
correlations: ``lo0filt`` on the image, then per level the 6 orientation filters and ``lofilt``
followed by decimation by 2. VIF needs orientations 0 and 3 of each level, so only those 8 bands
and the low-pass chain are computed here, each level by one forward FFT of its reflect-padded
input and one inverse FFT per band.

Two signals go through the pyramid together as the real and imaginary parts of one complex
image (the filters are real, so the parts never mix): the reference x and the difference
e = y - x. One complex transform costs about as much as two real ones, and the decimated
low-pass spectrum folds without Hermitian bookkeeping.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import math

import numpy as np

#: Pyramid height and the orientations (of 6) that VIF uses at every level.
HEIGHT = 4
ORIENTATIONS = (0, 3)
#: GSM block size: bands are cropped to multiples of it.
M = 3


#: pyrtools' sp5 filters (``lo0filt``, ``lofilt``, ``bfilts``), shipped with the package: importing
#: pyrtools for them costs a job about 2.3 s (it brings scipy.signal and matplotlib), more than a
#: shard of the tiny run takes to compute. tests/unit/test_vif.py checks them against pyrtools.
SP5_FILTERS = "data/vif/sp5_filters.json"


def shipped_sp5_filters() -> dict[str, np.ndarray]:
    """The shipped copy of ``pyrtools.pyramids.filters.steerable_filters("sp5_filters")``'s
    ``lo0filt``, ``lofilt`` and ``bfilts`` (float64, bit for bit)."""
    text = (importlib.resources.files("vcrbench") / SP5_FILTERS).read_text()
    doc = json.loads(text)
    return {k: np.asarray(doc[k], dtype=np.float64) for k in ("lo0filt", "lofilt", "bfilts")}


@functools.lru_cache(maxsize=1)
def sp5_filters() -> dict[str, np.ndarray]:
    """pyrtools' sp5 filters as 2-D correlation kernels, the orientation bands as pyrtools uses
    them."""
    f = shipped_sp5_filters()
    size = int(round(math.sqrt(f["bfilts"].shape[0])))
    bands = [np.asarray(f["bfilts"][:, b]).reshape(size, size).T for b in ORIENTATIONS]
    return {"lo0": np.asarray(f["lo0filt"]), "lo": np.asarray(f["lofilt"]), "bands": bands}


def _centred_spectrum(kernel: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Conjugate DFT of ``kernel`` placed with its centre at (0, 0): multiplying a signal's DFT by
    it and inverting gives the circular correlation of the signal with ``kernel``."""
    kh, kw = kernel.shape
    grid = np.zeros(shape)
    rows = (np.arange(kh) - kh // 2) % shape[0]
    cols = (np.arange(kw) - kw // 2) % shape[1]
    grid[np.ix_(rows, cols)] = kernel
    return np.conj(np.fft.fft2(grid))


@functools.lru_cache(maxsize=64)
def level_spectra(first: bool, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Spectra (complex128, ``shape``) of the 2 band filters (stacked) and of the low-pass filter.

    At the first level the input is the image itself, so ``lo0filt`` is folded into every filter:
    with 'reflect1' edges and a symmetric ``lo0filt`` the two stages equal one correlation of the
    reflected image with the composite filter. (Later levels cannot be folded in the same way:
    decimating an even-length signal breaks the reflection symmetry at its far end.)
    """
    f = sp5_filters()
    lo0 = _centred_spectrum(f["lo0"], shape) if first else 1.0
    bands = np.stack([lo0 * _centred_spectrum(b, shape) for b in f["bands"]])
    lo = lo0 * _centred_spectrum(f["lo"], shape)
    return bands, lo


def radius(first: bool, last: bool) -> int:
    """Reflection padding one level needs: the half-width of the widest filter applied to it."""
    f = sp5_filters()
    r = f["bands"][0].shape[0] // 2
    if not last:
        r = max(r, f["lo"].shape[0] // 2)
    return r + f["lo0"].shape[0] // 2 if first else r


def fft_len(n: int) -> int:
    """Smallest fast FFT length >= n that is even (decimation by 2 folds the spectrum in half)."""
    import scipy.fft

    n = scipy.fft.next_fast_len(n)
    while n % 2:
        n = scipy.fft.next_fast_len(n + 1)
    return n


def level_sizes(h: int, w: int) -> list[tuple[int, int]]:
    """Size of each level's input: pyrtools decimates with ``step=(2, 2)`` from sample 0."""
    sizes = [(h, w)]
    for _ in range(HEIGHT - 1):
        h, w = (h + 1) // 2, (w + 1) // 2
        sizes.append((h, w))
    return sizes


def reflect_padded(xp, parts, r: int, shape: tuple[int, int], dtype):
    """The complex image ``parts[0] + i parts[1]`` (or ``parts``, already complex), (..., h, w),
    at the origin of a zero array of ``shape``, with ``r`` samples reflected about its edge
    samples ('reflect1') after its end and, wrapping around, before its start.

    The circular correlation of this array with a kernel of half-width <= r equals pyrtools'
    ``corrDn(image, kernel, 'reflect1')`` on the first h x w samples.
    """
    lead = parts[0].shape[:-2] if isinstance(parts, tuple) else parts.shape[:-2]
    h, w = (parts[0] if isinstance(parts, tuple) else parts).shape[-2:]
    buf = xp.zeros(lead + shape, dtype)
    if isinstance(parts, tuple):
        buf.real[..., :h, :w] = parts[0]
        buf.imag[..., :h, :w] = parts[1]
    else:
        buf[..., :h, :w] = parts
    t = np.arange(r)
    buf[..., h : h + r, :w] = xp.take(buf[..., :h, :w], h - 2 - t, axis=-2)
    buf[..., shape[0] - r :, :w] = xp.take(buf[..., :h, :w], r - t, axis=-2)
    buf[..., :, w : w + r] = xp.take(buf, w - 2 - t, axis=-1)
    buf[..., :, shape[1] - r :] = xp.take(buf, r - t, axis=-1)
    return buf


def filter_level(spec, band_spec, lo_spec):
    """Spectra of the bands, (B, 2, L, W), and of the decimated low-pass output, (B, L/2, W/2)
    (None when ``lo_spec`` is None), from a level's spectrum ``spec`` (B, L, W).

    Decimating c to c[::2, ::2] adds up the four aliases of every frequency of its spectrum.
    """
    bands = spec[:, None] * band_spec
    if lo_spec is None:
        return bands, None
    p = spec * lo_spec
    hh, hw = spec.shape[-2] // 2, spec.shape[-1] // 2
    return bands, 0.25 * (
        (p[..., :hh, :hw] + p[..., hh:, :hw]) + (p[..., :hh, hw:] + p[..., hh:, hw:])
    )


def pyramid_bands(xp, ref, dist, dtype) -> list:
    """Orientation bands 0 and 3 of every level of x + i e, cropped to multiples of ``M``, where
    x = ref - mean(ref) and e = dist - ref - mean(dist - ref).

    ``ref``, ``dist`` (B, H, W) real -> list over levels (finest first) of (B, 2, h, w) complex
    ``dtype``: the real parts are the bands of x, the imaginary parts those of e.
    """
    levels = []
    lo = (ref, dist)  # later levels: the complex low-pass image
    h, w = ref.shape[-2:]
    for level in range(HEIGHT):
        first, last = level == 0, level == HEIGHT - 1
        r = radius(first, last)
        shape = (fft_len(h + 2 * r), fft_len(w + 2 * r))
        band_spec, lo_spec = level_spectra(first, shape)
        spec = xp.fft2(xp.reflect_padded(lo, r, shape, dtype))
        bands, small = xp.filter_level(
            spec, xp.spectrum(band_spec, dtype), None if last else xp.spectrum(lo_spec, dtype)
        )
        levels.append(xp.ifft2(bands)[..., : (h // M) * M, : (w // M) * M])
        if not last:  # corrDn(..., step=(2, 2)) keeps samples 0, 2, 4, ...
            lo = xp.ifft2(small)[..., : (h + 1) // 2, : (w + 1) // 2]
            h, w = lo.shape[-2:]
    return levels
