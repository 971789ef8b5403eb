"""R̂ = ∫₀¹ s(v) w(v) dv: the evaluation grid, weightings over Δv, and the trapezoid area.

Every curve (model or human, point estimate or bootstrap replicate) lives on the same grid of
``estimation.grid_size`` points over [0, 1] (1001 by default, step 0.001), so areas and the
human-aware metrics compare like with like.
The paper's R̂ weighs Δv uniformly; its footnote allows others (e.g. favouring heavy corruption),
given here as ``"beta:A,B"``, a function or an array.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

Weighting = str | Callable[[np.ndarray], np.ndarray] | np.ndarray | None


@functools.lru_cache(maxsize=16)
def default_grid(grid_size: int) -> np.ndarray:
    """The evaluation grid of ``grid_size`` points over [0, 1] shared by every curve
    (read-only; ``EstimationSettings().grid_size`` is the config's)."""
    grid = np.linspace(0.0, 1.0, grid_size)
    grid.setflags(write=False)
    return grid


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
    if hasattr(curve, "values") and hasattr(curve, "grid"):  # a Curve or an Estimate
        grid = curve.grid if grid is None else grid
        curve = curve.values
    values = np.asarray(curve, dtype=np.float64)
    grid = default_grid(values.shape[-1]) if grid is None else np.asarray(grid, dtype=np.float64)
    if values.shape[-1] != len(grid):
        raise ValueError(f"curve has {values.shape[-1]} points, grid has {len(grid)}")
    w = weights_on_grid(weighting, grid)
    result = np.trapezoid(values * w, grid, axis=-1)
    return float(result) if np.ndim(result) == 0 else result
