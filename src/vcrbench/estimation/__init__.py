"""VCR estimation (Alg. 1 of the VCR paper): Δv bins, an anchored monotone smoothing spline, its
area R̂, and bootstrap uncertainty. One concern per module, in the order an estimate runs:

- :mod:`~vcrbench.estimation.validate`: the one check of samples, outcomes, groups and anchors.
- :mod:`~vcrbench.estimation.counts`: the histogram of Alg. 1 (:func:`bin_counts`) over the bins of
  :mod:`vcrbench.bins` (``j = floor(v (M − 1))``, M = 40; bin M − 1 holds only v = 1.0).
- :mod:`~vcrbench.estimation.spline`: :func:`fit_curve`, a penalised cubic B-spline fitted to the
  rates of the bins with at least ``min_count`` samples, non-increasing, anchored at s(0), within
  [0, 1], with its penalty chosen by K-fold cross-validation of the held-out Brier score; or
  (``spline="quantile"``) the paper's L1 quantile smoothing spline,
  :mod:`~vcrbench.estimation.quantile`.
- :mod:`~vcrbench.estimation.area`: R̂ = ∫₀¹ s(v) w(v) dv on the shared grid (:func:`area`).
- :mod:`~vcrbench.estimation.bootstrap`: replicate curves from resampled samples or groups
  (:func:`bootstrap`), percentile intervals and bands.
- :mod:`~vcrbench.estimation.estimate`: :func:`estimate` (fit + bootstrap + R̂) and its
  :class:`Estimate` container.
- :mod:`~vcrbench.estimation.storage`: estimates to and from Parquet (model and human folders
  alike).
- :mod:`~vcrbench.estimation.lazy_scipy`: the scipy functions of the fits, imported at first use (a
  job that only reads estimates starts without scipy).

The fit, the bootstrap and the estimate take the config's ``estimation`` block whole, as one
:class:`~vcrbench.settings.EstimationSettings` (its defaults are the schema's).

What is computed from estimates, beside the estimator: :mod:`~vcrbench.estimation.metrics`
(HMRI, MRSI), :mod:`~vcrbench.estimation.similarity` (similar human curves) and
:mod:`~vcrbench.estimation.zeroshot` (class-balanced and per-class estimates).

``docs/estimation.md`` gives the reasons for every choice and the measured accuracy and speed.
"""

from vcrbench.bins import bin_edges, bin_index
from vcrbench.estimation.area import (
    Weighting,
    area,
    default_grid,
    weighting_name,
    weights_on_grid,
)
from vcrbench.estimation.bootstrap import (
    DEFAULT_LEVEL,
    bootstrap,
    percentile_interval,
    simultaneous_band,
)
from vcrbench.estimation.counts import bin_counts
from vcrbench.estimation.estimate import Estimate, estimate
from vcrbench.estimation.spline import LAMBDA_GRID, SPLINES, Curve, fit_curve
from vcrbench.settings import BOOTSTRAP_PENALTIES, SMALL_SAMPLE, EstimationSettings

__all__ = [
    "BOOTSTRAP_PENALTIES",
    "DEFAULT_LEVEL",
    "SMALL_SAMPLE",
    "LAMBDA_GRID",
    "SPLINES",
    "Curve",
    "Estimate",
    "EstimationSettings",
    "Weighting",
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
