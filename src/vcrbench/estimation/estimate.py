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
    GRID_SIZE,
    Weighting,
    area,
    default_grid,
    weighting_name,
    weights_on_grid,
)
from vcrbench.estimation.bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_N_BOOT,
    percentile_interval,
    prepare_anchor,
    replicate_curves,
    simultaneous_band,
    small_sample_factor,
    widen,
)
from vcrbench.estimation.counts import DEFAULT_EMPTY_BINS, DEFAULT_MIN_COUNT, check_empty_bins
from vcrbench.estimation.spline import (
    DEFAULT_N_FOLDS,
    DEFAULT_SPLINE,
    check_spline,
    fit_curve,
)
from vcrbench.estimation.validate import (
    check_anchor,
    check_samples,
    sample_weights,
    single_blas_thread,
)
from vcrbench.vocab import BINS_COLUMNS, HUMAN_LABEL_SPACE, IMAGENET1K, N_BINS

#: How bootstrap replicates get their smoothing penalty (:func:`estimate`).
BOOTSTRAP_PENALTIES = ("reselect", "fixed")
#: Small-sample corrections of the bootstrap (:func:`estimate`).
SMALL_SAMPLE = ("t", "none")
#: ``estimation.anchor1``'s value that pins s(1) at chance level, 1/K of the label space's K
#: classes (:func:`chance_level`): what an observer that guesses scores once Δv = 1 (VIF = 0)
#: leaves no information.
ANCHOR1_CHANCE = "chance"
#: The classes of the label spaces whose chance level is known to the estimator.
CHANCE_CLASSES = {IMAGENET1K: 1000, HUMAN_LABEL_SPACE: 16}


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

    def band(
        self, level: float = DEFAULT_LEVEL, kind: str = "pointwise"
    ) -> tuple[np.ndarray, np.ndarray]:
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

    def area_interval(self, level: float = DEFAULT_LEVEL, weighting: Weighting = None) -> tuple:
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
    *,
    n_bins: int = N_BINS,
    min_count: int = DEFAULT_MIN_COUNT,
    n_boot: int = DEFAULT_N_BOOT,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    groups=None,
    anchor_groups=None,
    weighting: Weighting = None,
    lam: float | None = None,
    anchor1: float | None = None,
    n_folds: int = DEFAULT_N_FOLDS,
    grid_size: int = GRID_SIZE,
    progress: bool | None = None,
    bootstrap_penalty: str = "reselect",
    small_sample: str = "t",
    weights=None,
    anchor_weights=None,
    spline: str = DEFAULT_SPLINE,
    empty_bins: str = DEFAULT_EMPTY_BINS,
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
    n_bins : M, the number of Δv bins.
    min_count : L, the minimum bin count for a bin's rate to enter the fit.
    n_boot : bootstrap replicates (0: none; band and intervals are NaN).
    level : level of the pointwise band and of the R̂ interval.
    seed : int seed; CV folds and bootstrap draws come from independent child generators of
        ``numpy.random.Generator(PCG64(seed))``.
    groups : optional group label per sample (e.g. participant): CV folds and bootstrap resample
        whole groups.
    anchor_groups : optional group label per clean outcome (with array ``anchor0``), resampled
        jointly with ``groups``.
    weighting : weighting over Δv for R̂ (see :func:`weights_on_grid`); the curve is unaffected.
    lam : fixed smoothing penalty; ``None`` (default) chooses it by cross-validation.
    anchor1 : optional s(1); default: free right end.
    n_folds : K of the K-fold cross-validation.
    bootstrap_penalty : ``"reselect"`` (default): each bootstrap replicate chooses its penalty by
        cross-validation on its resample, so intervals carry the uncertainty of that choice;
        ``"fixed"``: replicates refit with the penalty of the full data (faster, narrower).
        With a fixed ``lam`` nothing is chosen, so nothing is re-chosen.
    small_sample : ``"t"`` (default): replicate curves are moved
        :func:`~vcrbench.estimation.bootstrap.small_sample_factor` times as far from the point
        curve, a widening that matters only with few resampled units (images, observers);
        ``"none"``: plain percentile intervals.
    weights : optional non-negative weight per sample: bins hold weighted counts and the curve
        follows weighted rates (e.g. class-balanced accuracy, :mod:`vcrbench.zeroshot`); the
        bootstrap resamples units as without weights and keeps each sample's weight.
    anchor_weights : optional weight per clean outcome (with array ``anchor0``): s(0) is their
        weighted mean.
    spline : the fit, ``"pspline"`` (default) or ``"quantile"`` (the paper's L1 quantile
        smoothing spline; :func:`~vcrbench.estimation.fit_curve`).
    empty_bins : ``"skip"`` (default: bins under ``min_count`` are missing, Alg. 1) or ``"zero"``
        (they enter the point curve and every replicate at rate 0, as the authors' toolbox;
        :func:`~vcrbench.estimation.counts.zero_filled`).

    Returns
    -------
    Estimate
    """
    check_spline(spline)
    check_empty_bins(empty_bins)
    samples = check_samples(dv, correct, groups)
    weights = sample_weights(weights, correct)
    a0, anchor_data, anchor_weights, anchor1 = _anchors(
        anchor0, anchor_groups, anchor_weights, anchor1
    )
    _check_options(bootstrap_penalty, small_sample, n_boot, level, weighting, grid_size)
    cv_rng, boot_rng = np.random.Generator(np.random.PCG64(seed)).spawn(2)
    # What the point curve and every bootstrap replicate are fitted with alike.
    shared = {"n_bins": n_bins, "anchor1": anchor1, "grid_size": grid_size, "spline": spline}
    if empty_bins != DEFAULT_EMPTY_BINS:
        shared["empty_bins"] = empty_bins
    curve = fit_curve(
        samples.dv, samples.y, a0, min_count=min_count, lam=lam, n_folds=n_folds, seed=cv_rng,
        groups=samples.groups, weights=weights, **shared,
    )  # fmt: skip
    # Replicates re-choose the penalty only where the point curve chose it and they are asked to.
    replicate_folds = n_folds if lam is None and bootstrap_penalty == "reselect" else None
    reps = replicate_curves(
        bin_index(samples.dv, n_bins), samples.dv, samples.y, a0, anchor_data, samples.groups,
        used=curve.bins["used"].to_numpy(), lam=curve.lam, n_boot=int(n_boot), rng=boot_rng,
        progress=progress, n_folds=replicate_folds, weights=weights,
        anchor_weights=anchor_weights, **shared,
    )  # fmt: skip
    n_units = samples.n_groups if samples.n_groups is not None else len(samples.y)
    reps, lo, hi, area_lo, area_hi = summarise_replicates(
        reps, curve.values, curve.grid, n_units=n_units, level=level, weighting=weighting,
        small_sample=small_sample,
    )  # fmt: skip
    return Estimate(
        bins=curve.bins,
        grid=curve.grid,
        values=curve.values,
        lo=lo,
        hi=hi,
        level=float(level),
        area=area(curve.values, weighting, curve.grid),
        area_lo=area_lo,
        area_hi=area_hi,
        replicates=reps,
        anchor0=a0,
        anchor1=anchor1,
        lam=curve.lam,
        min_count=int(min_count),
        weighting=weighting_name(weighting),
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
    if anchor1 is not None:
        anchor1 = check_anchor(anchor1, "anchor1")
        if anchor1 > a0:
            raise ValueError(
                f"anchor1 ({anchor1}) exceeds anchor0 ({a0}): the curve is non-increasing"
            )
    return a0, anchor_data, anchor_weights, anchor1


def _check_options(bootstrap_penalty, small_sample, n_boot, level, weighting, grid_size) -> None:
    """The bootstrap's and the area's settings, checked before any work."""
    if bootstrap_penalty not in BOOTSTRAP_PENALTIES:
        raise ValueError(
            f"bootstrap_penalty must be one of {BOOTSTRAP_PENALTIES}, got {bootstrap_penalty!r}"
        )
    if small_sample not in SMALL_SAMPLE:
        raise ValueError(f"small_sample must be one of {SMALL_SAMPLE}, got {small_sample!r}")
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
    percentile_interval(np.zeros((0,)), level)  # validates level
    weights_on_grid(weighting, default_grid(grid_size))  # validates weighting before any work


def summarise_replicates(
    reps: np.ndarray,
    values: np.ndarray,
    grid: np.ndarray,
    *,
    n_units: int,
    level: float,
    weighting: Weighting,
    small_sample: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """The bootstrap's last steps, once: replicate curves ``reps`` (B, G) of the point curve
    ``values`` on ``grid``, widened by :func:`~vcrbench.estimation.bootstrap.small_sample_factor`
    of ``n_units`` resampled units (``small_sample="t"``), their pointwise percentile band at
    ``level`` and the percentile interval of their areas under ``weighting``. Returns
    ``(reps, lo, hi, area_lo, area_hi)``."""
    if small_sample == "t":
        reps = widen(reps, values, small_sample_factor(n_units, level))
    lo, hi = percentile_interval(reps, level)
    rep_areas = np.atleast_1d(area(reps.astype(np.float64), weighting, grid))
    area_lo, area_hi = percentile_interval(rep_areas, level)
    return (
        reps,
        np.asarray(lo, dtype=np.float64),
        np.asarray(hi, dtype=np.float64),
        float(area_lo),
        float(area_hi),
    )


def with_replicates(
    point: Estimate, reps: np.ndarray, *, weighting: Weighting, small_sample: str
) -> Estimate:
    """``point`` (an :func:`estimate` with ``n_boot=0``) completed by bootstrap replicate curves
    the caller drew itself (human curves redraw the trials' Δv in every replicate,
    :mod:`vcrbench.humans.curves`): the same widening, band and R̂ interval as :func:`estimate`
    (:func:`summarise_replicates`), the resampled units being ``point``'s groups or samples."""
    n_units = point.n_groups if point.n_groups is not None else point.n
    reps, lo, hi, area_lo, area_hi = summarise_replicates(
        reps, point.values, point.grid, n_units=n_units, level=point.level, weighting=weighting,
        small_sample=small_sample,
    )  # fmt: skip
    return dataclasses.replace(
        point, replicates=reps, lo=lo, hi=hi, area_lo=area_lo, area_hi=area_hi
    )


#: Keys of the config's ``estimation`` block that are :func:`estimate` arguments, and their names.
SETTINGS_ARGUMENTS = {
    "bins": "n_bins",
    "min_count": "min_count",
    "n_boot": "n_boot",
    "level": "level",
    "weighting": "weighting",
    "lam": "lam",
    "n_folds": "n_folds",
    "grid_size": "grid_size",
    "anchor1": "anchor1",
    "bootstrap_penalty": "bootstrap_penalty",
    "small_sample": "small_sample",
    "spline": "spline",
    "empty_bins": "empty_bins",
}


def estimate_kwargs(settings, label_space: str | None = None, anchor0=None) -> dict:
    """:func:`estimate`'s keyword arguments from the config's ``estimation`` block (keys it does
    not set, or sets to null, keep the estimator's defaults).

    ``anchor1: chance`` becomes the chance level of ``label_space`` (:func:`chance_level`), or
    s(0) where that is lower (``anchor0``: s(0), or the clean outcomes it is the mean of): a
    non-increasing curve cannot end above its start. Without a label space it is an error."""
    out = {
        arg: settings[key]
        for key, arg in SETTINGS_ARGUMENTS.items()
        if settings.get(key) is not None
    }
    if out.get("anchor1") == ANCHOR1_CHANCE:
        if label_space is None:
            raise ValueError(
                "estimation.anchor1: chance needs the label space of the curve (its 1/K)"
            )
        chance = chance_level(label_space)
        start = None if anchor0 is None else float(np.mean(anchor0))
        out["anchor1"] = chance if start is None else min(chance, start)
    return out


def chance_level(label_space: str) -> float:
    """1/K, the accuracy of guessing among the K classes of ``label_space`` (ImageNet-1k: 1/1000,
    the 16 classes of the human experiments: 1/16); a ValueError for a label space whose K the
    estimator does not know (give ``estimation.anchor1`` a number there)."""
    if label_space not in CHANCE_CLASSES:
        raise ValueError(
            f"estimation.anchor1: chance is known for {sorted(CHANCE_CLASSES)}, not for label "
            f"space {label_space!r}; give anchor1 a number"
        )
    return 1.0 / CHANCE_CLASSES[label_space]
