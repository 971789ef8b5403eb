"""The scipy functions the spline fits use, imported at their first call: scipy.interpolate,
scipy.linalg and scipy.optimize are about 1.5 s of a process's start-up, and every figure and
table job imports this package to read stored estimates without fitting anything
(tests/test_architecture.py checks that they start without scipy)."""

from __future__ import annotations

import functools

import numpy as np


def bspline():
    """:class:`scipy.interpolate.BSpline`."""
    from scipy.interpolate import BSpline

    return BSpline


@functools.cache
def lapack():
    """LAPACK's ``geqrf`` and ``trtrs`` for float64 arrays."""
    from scipy.linalg import get_lapack_funcs

    return get_lapack_funcs(("geqrf", "trtrs"), (np.zeros((2, 2)),))


def solve_triangular(*args, **kwargs):
    """:func:`scipy.linalg.solve_triangular`."""
    from scipy.linalg import solve_triangular

    return solve_triangular(*args, **kwargs)


def nnls(*args, **kwargs):
    """:func:`scipy.optimize.nnls`."""
    from scipy.optimize import nnls

    return nnls(*args, **kwargs)
