"""One estimate of Alg. 1: the fitted curve, its bootstrap band, R̂ and its interval, and every
setting needed to rebuild it, in the :class:`Estimate` container that the workflow writes to
Parquet and reads back (:mod:`vcrbench.estimation.storage`).
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pandas as pd

from vcrbench.bins import bin_index
from vcrbench.estimation.area import (
    Weighting,
    area,
    default_grid,
    weighting_name,
    weights_on_grid,
)
from vcrbench.estimation.bootstrap import (
    percentile_interval,
    prepare_anchor,
    replicate_curves,
    reselects,
    simultaneous_band,
    small_sample_factor,
    widen,
)
from vcrbench.estimation.counts import DEFAULT
from vcrbench.estimation.spline import fit_curve
from vcrbench.estimation.validate import (
    check_samples,
    fixed_anchor1,
    sample_weights,
    single_blas_thread,
)
from vcrbench.settings import (  # noqa: F401 (BOOTSTRAP_PENALTIES … chance_level: re-exported)
    ANCHOR1_CHANCE,
    BOOTSTRAP_PENALTIES,
    CHANCE_CLASSES,
    SMALL_SAMPLE,
    EstimationSettings,
    chance_level,
)
from vcrbench.vocab import BINS_COLUMNS


@dataclasses.dataclass(frozen=True, eq=False)
class Estimate:
    """Everything the workflow keeps about one curve (a model or the human reference).

    ``values`` is the fitted curve on ``grid``; ``lo``/``hi`` its pointwise percentile band at
    ``level``; ``area`` is R̂ under ``weighting`` with percentile interval ``area_lo``/``area_hi``;
    ``replicates`` holds the bootstrap curves (B, G) as float32 (B = 0: no band, NaN intervals).
    """

    bins: pd.DataFrame
    grid: np.ndarray
    values: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    level: float
    area: float
    area_lo: float
    area_hi: float
    replicates: np.ndarray
    anchor0: float
    anchor1: float | None
    lam: float
    min_count: int
    weighting: str
    n: int
    n_missing: int
    n_groups: int | None
    seed: int

    @property
    def n_boot(self) -> int:
        return int(self.replicates.shape[0])

    def band(self, level: float, kind: str = "pointwise") -> tuple[np.ndarray, np.ndarray]:
        """Band of the curve at ``level`` (e.g. 0.83) from the replicates.

        ``kind="pointwise"``: percentiles of the replicates at each Δv (the paper's bands);
        ``kind="simultaneous"``: a sup-t band (:func:`simultaneous_band`) that holds whole
        replicate curves with probability ``level``.
        """
        if kind == "pointwise":
            return percentile_interval(self.replicates, level)
        if kind == "simultaneous":
            return simultaneous_band(self.replicates, self.values, level)
        raise ValueError(f"band kind must be 'pointwise' or 'simultaneous', got {kind!r}")

    def replicate_areas(self, weighting: Weighting = None) -> np.ndarray:
        return np.atleast_1d(area(self.replicates.astype(np.float64), weighting, self.grid))

    def area_interval(self, level: float, weighting: Weighting = None) -> tuple:
        lo, hi = percentile_interval(self.replicate_areas(weighting), level)
        return float(lo), float(hi)

    # -------------------------------------------------------------------- tidy tables for Parquet

    def curve_frame(self) -> pd.DataFrame:
        """Columns ``v, s, lo, hi`` (float64), one row per grid point."""
        return pd.DataFrame({"v": self.grid, "s": self.values, "lo": self.lo, "hi": self.hi})

    def bins_frame(self) -> pd.DataFrame:
        return self.bins.copy()

    def summary_frame(self) -> pd.DataFrame:
        """One row: R̂, its interval and every setting needed to rebuild the Estimate."""
        return pd.DataFrame(
            {
                "area": [self.area],
                "area_lo": [self.area_lo],
                "area_hi": [self.area_hi],
                "level": [self.level],
                "anchor0": [self.anchor0],
                "anchor1": [np.nan if self.anchor1 is None else self.anchor1],
                "lam": [self.lam],
                "min_count": [self.min_count],
                "weighting": [self.weighting],
                "n": [self.n],
                "n_missing": [self.n_missing],
                "n_groups": [-1 if self.n_groups is None else self.n_groups],
                "n_boot": [self.n_boot],
                "seed": [self.seed],
                "grid_size": [len(self.grid)],
            }
        )

    def replicates_frame(self) -> pd.DataFrame:
        """Long table ``replicate`` (int32), ``i`` (grid index, int32), ``s`` (float32)."""
        B, G = self.replicates.shape
        return pd.DataFrame(
            {
                "replicate": np.repeat(np.arange(B, dtype=np.int32), G),
                "i": np.tile(np.arange(G, dtype=np.int32), B),
                "s": self.replicates.reshape(-1),
            }
        )

    def to_frames(self) -> dict[str, pd.DataFrame]:
        """``{"bins", "curve", "summary", "replicates"}`` tables; :meth:`from_frames` inverts."""
        return {
            "bins": self.bins_frame(),
            "curve": self.curve_frame(),
            "summary": self.summary_frame(),
            "replicates": self.replicates_frame(),
        }

    @classmethod
    def from_frames(
        cls,
        bins: pd.DataFrame,
        curve: pd.DataFrame,
        summary: pd.DataFrame,
        replicates: pd.DataFrame | None = None,
    ) -> Estimate:
        """Rebuild an Estimate from :meth:`to_frames` tables (e.g. read back from Parquet).

        Extra key columns (model, corruption, …) are ignored; pass the rows of one estimate.
        """
        if len(summary) != 1:
            raise ValueError(f"summary must have exactly one row, got {len(summary)}")
        row = summary.iloc[0]
        curve = curve.sort_values("v", kind="stable")
        G = int(row["grid_size"])
        if len(curve) != G:
            raise ValueError(f"curve table has {len(curve)} rows, summary says grid_size={G}")
        if replicates is None or len(replicates) == 0:
            reps = np.zeros((0, G), dtype=np.float32)
        else:
            rep = replicates.sort_values(["replicate", "i"], kind="stable")
            B = rep["replicate"].nunique()
            if len(rep) != B * G:
                raise ValueError(f"replicates table has {len(rep)} rows, expected {B} x {G}")
            reps = rep["s"].to_numpy(np.float32).reshape(B, G)
        anchor1 = float(row["anchor1"])
        n_groups = int(row["n_groups"])
        return cls(
            bins=bins[BINS_COLUMNS].sort_values("bin", kind="stable").reset_index(drop=True),
            grid=curve["v"].to_numpy(np.float64),
            values=curve["s"].to_numpy(np.float64),
            lo=curve["lo"].to_numpy(np.float64),
            hi=curve["hi"].to_numpy(np.float64),
            level=float(row["level"]),
            area=float(row["area"]),
            area_lo=float(row["area_lo"]),
            area_hi=float(row["area_hi"]),
            replicates=reps,
            anchor0=float(row["anchor0"]),
            anchor1=None if math.isnan(anchor1) else anchor1,
            lam=float(row["lam"]),
            min_count=int(row["min_count"]),
            weighting=str(row["weighting"]),
            n=int(row["n"]),
            n_missing=int(row["n_missing"]),
            n_groups=None if n_groups < 0 else n_groups,
            seed=int(row["seed"]),
        )

    def metadata(self) -> dict:
        """JSON-ready settings (for Parquet provenance metadata)."""
        return json.loads(self.summary_frame().iloc[0].to_json())


@single_blas_thread
def estimate(
    dv,
    correct,
    anchor0,
    settings: EstimationSettings = DEFAULT,
    *,
    seed: int,
    groups=None,
    anchor_groups=None,
    weights=None,
    anchor_weights=None,
    progress: bool | None = None,
) -> Estimate:
    """Alg. 1 for one (model or human reference, corruption, label space, property): the curve
    (:func:`~vcrbench.estimation.fit_curve`), its bootstrap band and R̂ with its interval.

    Parameters
    ----------
    dv : Δv of each sample, in [0, 1].
    correct : 0/1 or boolean outcome per sample (accuracy f(x') = y, or consistency
        f(x') = f(x)); NaN = missing (dropped and counted in ``n_missing``).
    anchor0 : s(0): a number (clean accuracy; 1 for the consistency of a deterministic model), or
        the array of clean 0/1 outcomes it is the mean of, which the bootstrap then resamples.
    settings : the estimator's settings (:class:`~vcrbench.settings.EstimationSettings`, the
        config's ``estimation`` block): M bins, L = ``min_count``, ``n_boot`` replicates (0: none;
        band and intervals are NaN) at ``level``, the ``spline`` and its penalty ``lam`` (None:
        chosen by ``n_folds``-fold cross-validation), s(1) = ``anchor1`` (None: free; ``chance``
        must be resolved first, :meth:`~vcrbench.settings.EstimationSettings.for_label_space`),
        ``empty_bins``, the ``weighting`` of R̂ (the curve is unaffected) on a grid of
        ``grid_size`` points, and the bootstrap's ``bootstrap_penalty`` (``reselect``: each
        replicate chooses its penalty by cross-validation on its resample, so intervals carry the
        uncertainty of that choice; ``fixed``: the full data's penalty, faster and narrower; with
        a fixed ``lam`` nothing is chosen, so nothing is re-chosen) and ``small_sample``
        correction (``t``: replicate curves moved
        :func:`~vcrbench.estimation.bootstrap.small_sample_factor` times as far from the point
        curve, a widening that matters only with few resampled units; ``none``: plain percentile
        intervals).
    seed : int seed; CV folds and bootstrap draws come from independent child generators of
        ``numpy.random.Generator(PCG64(seed))``. Each estimate derives its own from the config's
        ``seed`` (:mod:`vcrbench.seeding`), so it has no default.
    groups : optional group label per sample (e.g. participant): CV folds and bootstrap resample
        whole groups.
    anchor_groups : optional group label per clean outcome (with array ``anchor0``), resampled
        jointly with ``groups``.
    weights : optional non-negative weight per sample: bins hold weighted counts and the curve
        follows weighted rates (e.g. class-balanced accuracy, :mod:`vcrbench.estimation.zeroshot`);
        the bootstrap resamples units as without weights and keeps each sample's weight.
    anchor_weights : optional weight per clean outcome (with array ``anchor0``): s(0) is their
        weighted mean.

    Returns
    -------
    Estimate
    """
    samples = check_samples(dv, correct, groups)
    weights = sample_weights(weights, correct)
    a0, anchor_data, anchor_weights, anchor1 = _anchors(
        anchor0, anchor_groups, anchor_weights, settings.anchor1
    )
    weights_on_grid(settings.weighting, default_grid(settings.grid_size))  # checked before any work
    cv_rng, boot_rng = np.random.Generator(np.random.PCG64(seed)).spawn(2)
    curve = fit_curve(
        samples.dv, samples.y, a0, settings, seed=cv_rng, groups=samples.groups, weights=weights
    )
    # Replicates re-choose the penalty only where the point curve chose it and they are asked to.
    reps = replicate_curves(
        bin_index(samples.dv, settings.bins), samples.dv, samples.y, a0, anchor_data,
        samples.groups, settings, used=curve.bins["used"].to_numpy(), lam=curve.lam,
        anchor1=anchor1, rng=boot_rng, progress=progress, reselect=reselects(settings),
        weights=weights, anchor_weights=anchor_weights,
    )  # fmt: skip
    n_units = samples.n_groups if samples.n_groups is not None else len(samples.y)
    reps, lo, hi, area_lo, area_hi = summarise_replicates(
        reps, curve.values, curve.grid, settings, n_units=n_units
    )
    return Estimate(
        bins=curve.bins,
        grid=curve.grid,
        values=curve.values,
        lo=lo,
        hi=hi,
        level=float(settings.level),
        area=area(curve.values, settings.weighting, curve.grid),
        area_lo=area_lo,
        area_hi=area_hi,
        replicates=reps,
        anchor0=a0,
        anchor1=anchor1,
        lam=curve.lam,
        min_count=int(settings.min_count),
        weighting=weighting_name(settings.weighting),
        n=len(samples.y),
        n_missing=samples.n_missing,
        n_groups=samples.n_groups,
        seed=int(seed),
    )


def _anchors(anchor0, anchor_groups, anchor_weights, anchor1):
    """``(s(0), clean outcomes and their groups or None, their weights or None, s(1) or None)``,
    checked: s(0) is the (weighted) mean of the clean outcomes where they are given."""
    a0, anchor_data = prepare_anchor(anchor0, anchor_groups)
    if anchor_weights is not None:
        if anchor_data is None:
            raise ValueError("anchor_weights given but anchor0 is a number, not clean outcomes")
        anchor_weights = sample_weights(anchor_weights, anchor0, "anchor_weights")
        if anchor_weights.sum() <= 0:
            raise ValueError("anchor_weights sum to 0")
        a0 = float(anchor_weights @ anchor_data[0] / anchor_weights.sum())
    anchor1 = fixed_anchor1(anchor1)
    if anchor1 is not None and anchor1 > a0:
        raise ValueError(f"anchor1 ({anchor1}) exceeds anchor0 ({a0}): the curve is non-increasing")
    return a0, anchor_data, anchor_weights, anchor1


def summarise_replicates(
    reps: np.ndarray,
    values: np.ndarray,
    grid: np.ndarray,
    settings: EstimationSettings,
    *,
    n_units: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """The bootstrap's last steps, once: replicate curves ``reps`` (B, G) of the point curve
    ``values`` on ``grid``, widened by :func:`~vcrbench.estimation.bootstrap.small_sample_factor`
    of ``n_units`` resampled units (``settings.small_sample`` ``t``), their pointwise percentile
    band at ``settings.level`` and the percentile interval of their areas under
    ``settings.weighting``. Returns ``(reps, lo, hi, area_lo, area_hi)``."""
    level = settings.level
    if settings.small_sample == "t":
        reps = widen(reps, values, small_sample_factor(n_units, level))
    lo, hi = percentile_interval(reps, level)
    rep_areas = np.atleast_1d(area(reps.astype(np.float64), settings.weighting, grid))
    area_lo, area_hi = percentile_interval(rep_areas, level)
    return (
        reps,
        np.asarray(lo, dtype=np.float64),
        np.asarray(hi, dtype=np.float64),
        float(area_lo),
        float(area_hi),
    )


def with_replicates(point: Estimate, reps: np.ndarray, settings: EstimationSettings) -> Estimate:
    """``point`` (an :func:`estimate` with ``n_boot=0``) completed by bootstrap replicate curves
    the caller drew itself (human curves redraw the trials' Δv in every replicate,
    :mod:`vcrbench.humans.curves`): the same widening, band and R̂ interval as :func:`estimate`
    (:func:`summarise_replicates` with ``settings``, ``point``'s own), the resampled units being
    ``point``'s groups or samples."""
    n_units = point.n_groups if point.n_groups is not None else point.n
    reps, lo, hi, area_lo, area_hi = summarise_replicates(
        reps, point.values, point.grid, settings, n_units=n_units
    )
    return dataclasses.replace(
        point, replicates=reps, lo=lo, hi=hi, area_lo=area_lo, area_hi=area_hi
    )
