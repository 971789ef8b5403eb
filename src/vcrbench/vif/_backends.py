"""Array back-ends: numpy/scipy (+ numba kernels) on the CPU, or torch on any torch device.

The algorithm in ``_pyramid`` and ``_stats`` is written once against the small set of operations
below. The steps that would cost numpy many passes over a band (padding, spectrum products,
neighbourhood and window statistics, GSM multipliers) are compiled kernels on the numpy side
(``_kernels``) and the array-operation versions of ``_pyramid`` / ``_stats`` on the torch side.
"""

from __future__ import annotations

import functools

import numpy as np

#: Filter spectra a back-end keeps converted (a few per image size): bounded, so that images of
#: many sizes (``dataset.resolution: stored``) do not keep every size's spectra alive.
MAX_SPECTRA = 32


def _cached(cache: dict, key, a, convert):
    """``convert(a)``, cached under ``key`` (which holds ``id(a)``): the entry keeps ``a`` alive, so
    its id cannot be reused while it is cached; the oldest entry goes past :data:`MAX_SPECTRA`."""
    if key not in cache:
        if len(cache) >= MAX_SPECTRA:
            cache.pop(next(iter(cache)))
        cache[key] = (a, convert(a))
    return cache[key][1]


class NumpyBackend:
    """numpy and scipy.fft, single-threaded (parallelise by process, as the workflow does)."""

    name = "numpy"
    float64 = np.float64
    complex128 = np.complex128

    def __init__(self):
        import scipy.fft

        self._fft = scipy.fft
        self._spectra: dict = {}

    def asarray(self, a, dtype):
        return np.asarray(a, dtype=dtype)

    def filter_level(self, spec, band_spec, lo_spec):
        from . import _kernels

        n, lh, lw = spec.shape
        bands = np.empty((n, 2, lh, lw), spec.dtype)
        if lo_spec is None:
            _kernels.filter_bands(spec, band_spec, bands)
            return bands, None
        lo = np.empty((n, lh // 2, lw // 2), spec.dtype)
        _kernels.filter_bands(spec, band_spec, bands)
        _kernels.filter_decimated(spec, lo_spec, lo)
        return bands, lo

    def zeros(self, shape, dtype):
        return np.zeros(shape, dtype=dtype)

    def take(self, a, index, axis):
        return np.take(a, index, axis=axis)

    def fft2(self, a):
        return self._fft.fft2(a, workers=1, overwrite_x=True)  # callers pass temporaries

    def ifft2(self, a):
        return self._fft.ifft2(a, workers=1, overwrite_x=True)

    def spectrum(self, a: np.ndarray, dtype):
        """A cached filter spectrum as ``dtype``, converted once."""
        key = (id(a), np.dtype(dtype).name)
        return _cached(self._spectra, key, a, lambda x: x.astype(dtype))

    def cast(self, a, dtype):
        return a.astype(dtype, copy=False)

    def blocks(self, band, nb_r, nb_c):
        """(..., 3 nb_r, 3 nb_c) -> (..., nb_r nb_c, 9) float64: the 3x3 blocks as rows."""
        b = band.reshape(band.shape[:-2] + (nb_r, 3, nb_c, 3))
        b = np.moveaxis(b, -3, -2)
        return b.reshape(band.shape[:-2] + (nb_r * nb_c, 9)).astype(np.float64)

    def eigh(self, a):
        return np.linalg.eigh(a)

    def where(self, cond, a, b):
        return np.where(cond, a, b)

    def maximum(self, a, b):
        return np.maximum(a, b)

    def log(self, a):
        return np.log(a)

    def stack(self, arrays, axis=0):
        return np.stack(arrays, axis=axis)

    def concat(self, arrays, axis=0):
        return np.concatenate(arrays, axis=axis)

    def isfinite_all(self, a) -> bool:
        return bool(np.isfinite(a).all())

    def to_numpy(self, a) -> np.ndarray:
        return np.asarray(a)

    def reflect_padded(self, parts, r: int, shape, dtype):
        from . import _kernels

        first = isinstance(parts, tuple)
        if first:  # (reference, distorted): write x - mean + i (y - x - mean)
            re, im = parts
            ref_mean = re.mean((-2, -1))
            diff_mean = im.mean((-2, -1)) - ref_mean
        else:
            re, im = parts.real, parts.imag
            ref_mean = diff_mean = np.zeros(re.shape[0])
        out = np.empty(re.shape[:-2] + tuple(shape), dtype)
        _kernels.reflect_padded(re, im, r, out, ref_mean, diff_mean, first)
        return out

    def band_statistics(self, bands, win: int, off: int):
        from . import _kernels

        lead = bands.shape[:-2]
        h, w = bands.shape[-2:]
        n = int(np.prod(lead))
        nb_r, nb_c = h // 3 - 2 * off, w // 3 - 2 * off
        sums, second = np.empty((n, 9)), np.empty((n, 9, 9))
        moments = np.empty((n, 5, nb_r, nb_c))
        flat = bands.reshape((n, h, w))
        _kernels.band_statistics(
            flat, win, off, _kernels.DISPLACEMENTS, _pair_table(), sums, second, moments
        )
        moments /= float(win * win)
        return (
            sums.reshape(lead + (9,)),
            second.reshape(lead + (9, 9)),
            moments.reshape(lead + (5, nb_r, nb_c)),
        )

    def information(self, moments, s, lam, win: int, variant):
        from ._stats import band_information

        return band_information(self, moments, s, lam, win, variant)

    def gsm_multipliers(self, bands, off: int, lam, vec):
        from . import _kernels

        lead = bands.shape[:-2]
        h, w = bands.shape[-2:]
        n = int(np.prod(lead))
        nb_r, nb_c = h // 3 - 2 * off, w // 3 - 2 * off
        out = np.empty((n, nb_r, nb_c))
        _kernels.gsm_multipliers(
            bands.reshape((n, h, w)), off, lam.reshape(n, 9), vec.reshape(n, 9, 9), out
        )
        return out.reshape(lead + (nb_r, nb_c))


@functools.lru_cache(maxsize=1)
def _pair_table():
    from . import _kernels

    return _kernels.pair_table()


class TorchBackend:
    """The same operations on torch tensors of one device (CPU or GPU)."""

    name = "torch"

    def __init__(self, device):
        import torch

        self.torch = torch
        self.device = torch.device(device)
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device {device!r}: torch {torch.__version__} sees no CUDA device")
        self.float64 = torch.float64
        self.complex128 = torch.complex128
        self._spectra: dict = {}

    def asarray(self, a, dtype):
        t = self.torch
        dtype = {np.float64: t.float64, np.float32: t.float32}.get(dtype, dtype)
        if isinstance(a, t.Tensor):
            return a.to(device=self.device, dtype=dtype)
        return t.as_tensor(np.asarray(a), device=self.device).to(dtype)

    def filter_level(self, spec, band_spec, lo_spec):
        from ._pyramid import filter_level

        return filter_level(spec, band_spec, lo_spec)

    def zeros(self, shape, dtype):
        return self.torch.zeros(shape, dtype=dtype, device=self.device)

    def take(self, a, index, axis):
        idx = self.torch.as_tensor(np.asarray(index), device=a.device)
        return self.torch.index_select(a, axis % a.ndim, idx)

    def fft2(self, a):
        return self.torch.fft.fft2(a)

    def ifft2(self, a):
        return self.torch.fft.ifft2(a)

    def spectrum(self, a: np.ndarray, dtype):
        key = (id(a), dtype)
        return _cached(
            self._spectra, key, a, lambda x: self.torch.as_tensor(x, device=self.device).to(dtype)
        )

    def cast(self, a, dtype):
        return a.to(dtype)

    def blocks(self, band, nb_r, nb_c):
        b = band.reshape(band.shape[:-2] + (nb_r, 3, nb_c, 3))
        b = self.torch.movedim(b, -3, -2)
        return b.reshape(band.shape[:-2] + (nb_r * nb_c, 9)).to(self.torch.float64)

    def eigh(self, a):
        return self.torch.linalg.eigh(a)

    def where(self, cond, a, b):
        return self.torch.where(cond, a, b)

    def maximum(self, a, b):
        t = self.torch
        return t.maximum(a, b) if isinstance(b, t.Tensor) else t.clamp(a, min=b)

    def log(self, a):
        return self.torch.log(a)

    def stack(self, arrays, axis=0):
        return self.torch.stack(arrays, dim=axis)

    def concat(self, arrays, axis=0):
        return self.torch.cat(arrays, dim=axis)

    def isfinite_all(self, a) -> bool:
        return bool(self.torch.isfinite(a).all())

    def to_numpy(self, a) -> np.ndarray:
        return a.detach().cpu().numpy()

    def reflect_padded(self, parts, r: int, shape, dtype):
        from ._pyramid import reflect_padded

        if isinstance(parts, tuple):  # (reference, distorted): x - mean + i (y - x - mean)
            ref, dist = parts
            x = ref - ref.mean((-2, -1))[:, None, None]
            e = dist - ref
            parts = (x, e - e.mean((-2, -1))[:, None, None])
        return reflect_padded(self, parts, r, shape, dtype)

    def band_statistics(self, bands, win: int, off: int):
        from ._stats import band_statistics

        return band_statistics(self, bands, win, off)

    def gsm_multipliers(self, bands, off: int, lam, vec):
        from ._stats import gsm_multipliers

        return gsm_multipliers(self, bands, off, lam, vec)

    def information(self, moments, s, lam, win: int, variant):
        from ._stats import band_information

        return band_information(self, moments, s, lam, win, variant)


@functools.lru_cache(maxsize=8)
def get_backend(device: str | None):
    """numpy for ``device=None``, else torch on that device."""
    return NumpyBackend() if device is None else TorchBackend(device)
