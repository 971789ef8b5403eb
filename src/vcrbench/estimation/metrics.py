"""Human-aware VCR metrics (Section 3.3 of the VCR paper): A_h, A_m, A_{h>m}, A_{m>h}, HMRI, MRSI.

With s_h and s_m the human and model curves on the same grid over Δv ∈ [0, 1]:

- A_h = ∫ s_h, A_m = ∫ s_m, A_{h>m} = ∫ max(0, s_h - s_m), A_{m>h} = ∫ max(0, s_m - s_h);
- HMRI = 1 - A_{h>m} / A_h ∈ [0, 1] (1: the model is at least as good as humans everywhere);
- MRSI = A_{m>h} / A_m ∈ [0, 1) (> 0: the model beats humans somewhere).

All areas may be restricted to a Δv range, the human reference's support (where its conditions
were measured; :func:`support_mask`): outside it there are no human data, only extrapolation.
Restricted to [0, 1] they are the full-range metrics.

Degenerate denominators have a defined value, never NaN: A_h = 0 (humans never right) gives
HMRI = 1, and A_m = 0 (the model never right) gives MRSI = 0; both are the limits that keep
"HMRI = 1 ⇔ s_m >= s_h everywhere" and "MRSI = 0 ⇔ s_m <= s_h everywhere" true. Integrals are
trapezoid sums on the shared grid, optionally under a weighting over Δv (as R̂).
"""

from __future__ import annotations

import numpy as np

from vcrbench.estimation import (
    Estimate,
    Weighting,
    percentile_interval,
    weights_on_grid,
)

SCENARIO_HUMANS_BETTER = "humans better everywhere"
SCENARIO_MODEL_BETTER = "model better everywhere"
SCENARIO_MIXED = "mixed"
SCENARIO_IDENTICAL = "identical"
SCENARIOS = (SCENARIO_HUMANS_BETTER, SCENARIO_MODEL_BETTER, SCENARIO_MIXED, SCENARIO_IDENTICAL)
#: Areas at or below this count as zero when labelling the scenario (curves on [0, 1] in [0, 1]).
DEFAULT_TOL = 1e-9


SCENARIO_UNDETERMINED = "undetermined"


def support_mask(grid: np.ndarray, support: tuple[float, float] | None) -> np.ndarray:
    """Grid points inside ``support = (lo, hi)`` (all of them for None); at least two points."""
    grid = np.asarray(grid, dtype=np.float64)
    if support is None:
        return np.ones(grid.shape, dtype=bool)
    lo, hi = (float(x) for x in support)
    if not (0.0 <= lo < hi <= 1.0):
        raise ValueError(f"support must satisfy 0 <= lo < hi <= 1, got ({lo}, {hi})")
    mask = (grid >= lo - 1e-12) & (grid <= hi + 1e-12)
    if mask.sum() < 2:
        raise ValueError(f"support ({lo}, {hi}) holds fewer than two grid points")
    return mask


def _areas(
    s_h: np.ndarray,
    s_m: np.ndarray,
    grid: np.ndarray,
    weighting: Weighting,
    support: tuple[float, float] | None = None,
):
    """A_h, A_m, A_{h>m}, A_{m>h} over ``support`` (arrays over leading axes)."""
    mask = support_mask(grid, support)
    w = weights_on_grid(weighting, grid)[mask]
    sub = grid[mask]
    s_h, s_m = s_h[..., mask], s_m[..., mask]
    diff = s_h - s_m

    def integral(f):
        return np.trapezoid(f * w, sub, axis=-1)

    return (
        integral(s_h),
        integral(s_m),
        integral(np.maximum(diff, 0.0)),
        integral(np.maximum(-diff, 0.0)),
    )


def hmri(a_h, a_h_gt_m):
    """HMRI = 1 − A_{h>m} / A_h ∈ [0, 1]: the share of human robustness the model reaches
    (1: at least as good as humans everywhere). A_h = 0 (humans never right) gives 1.
    Works elementwise on arrays (bootstrap replicates)."""
    a_h = np.asarray(a_h, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(a_h > 0, 1.0 - np.divide(a_h_gt_m, a_h), 1.0)
    return np.clip(value, 0.0, 1.0)


def mrsi(a_m, a_m_gt_h):
    """MRSI = A_{m>h} / A_m ∈ [0, 1): the share of the model's robustness that exceeds humans
    (> 0: better than humans somewhere). A_m = 0 (the model never right) gives 0.
    Works elementwise on arrays (bootstrap replicates)."""
    a_m = np.asarray(a_m, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(a_m > 0, np.divide(a_m_gt_h, a_m), 0.0)
    return np.clip(value, 0.0, 1.0)


def _indices(a_h, a_m, a_h_gt_m, a_m_gt_h):
    """HMRI and MRSI with their defined values at A_h = 0 and A_m = 0."""
    return hmri(a_h, a_h_gt_m), mrsi(a_m, a_m_gt_h)


def scenario(a_h_gt_m: float, a_m_gt_h: float, tol: float = DEFAULT_TOL) -> str:
    """The paper's scenario from the two lead areas (a lead <= ``tol`` counts as none).

    humans better everywhere: HMRI < 1, MRSI = 0; model better everywhere: HMRI = 1, MRSI > 0;
    mixed: HMRI < 1, MRSI > 0; identical: HMRI = 1, MRSI = 0 (no lead either way).
    """
    human_lead, model_lead = a_h_gt_m > tol, a_m_gt_h > tol
    if human_lead and model_lead:
        return SCENARIO_MIXED
    if human_lead:
        return SCENARIO_HUMANS_BETTER
    if model_lead:
        return SCENARIO_MODEL_BETTER
    return SCENARIO_IDENTICAL


def scenario_label(point: str, share: float, level: float) -> str:
    """The point scenario where at least ``level`` of the bootstrap replicates agree with it, else
    ``"undetermined"`` (also without replicates: a label no interval supports is not reported)."""
    if not 0 < level <= 1:
        raise ValueError(f"scenario level must lie in (0, 1], got {level!r}")
    return point if share == share and share >= level else SCENARIO_UNDETERMINED


def _check_curves(s_h, s_m, grid):
    s_h = np.asarray(s_h, dtype=np.float64)
    s_m = np.asarray(s_m, dtype=np.float64)
    if s_h.shape != s_m.shape or s_h.ndim != 1:
        raise ValueError(
            f"s_h and s_m must be 1-D of equal length, got {s_h.shape} and {s_m.shape}"
        )
    grid = np.linspace(0.0, 1.0, len(s_h)) if grid is None else np.asarray(grid, dtype=np.float64)
    if grid.shape != s_h.shape:
        raise ValueError(f"grid has {len(grid)} points, curves have {len(s_h)}")
    for name, s in (("s_h", s_h), ("s_m", s_m)):
        if not np.isfinite(s).all():
            raise ValueError(f"{name} has non-finite values")
        if (s < 0).any() or (s > 1).any():
            raise ValueError(f"{name} must lie in [0, 1]")
    return s_h, s_m, grid


def human_aware(
    s_h,
    s_m,
    grid=None,
    *,
    weighting: Weighting = None,
    tol: float = DEFAULT_TOL,
    support: tuple[float, float] | None = None,
) -> dict:
    """All human-aware metrics of a model curve ``s_m`` against the human curve ``s_h``.

    Both curves are values on ``grid`` (default: equally spaced over [0, 1]); the areas are taken
    over ``support = (lo, hi)`` (None: the whole grid).

    Returns
    -------
    dict with floats ``A_h``, ``A_m``, ``A_h_gt_m``, ``A_m_gt_h``, ``HMRI``, ``MRSI`` and the
    string ``scenario`` (one of :data:`SCENARIOS`).
    """
    s_h, s_m, grid = _check_curves(s_h, s_m, grid)
    a_h, a_m, a_hm, a_mh = (float(a) for a in _areas(s_h, s_m, grid, weighting, support))
    hmri, mrsi = _indices(a_h, a_m, a_hm, a_mh)
    return {
        "A_h": a_h,
        "A_m": a_m,
        "A_h_gt_m": a_hm,
        "A_m_gt_h": a_mh,
        "HMRI": float(hmri),
        "MRSI": float(mrsi),
        "scenario": scenario(a_hm, a_mh, tol),
    }


def implied_human_area(r_model: float, hmri: float, mrsi: float) -> float:
    """A_h implied by a model's R̂ (= A_m), HMRI and MRSI: A_h = A_m (1 - MRSI) / HMRI.

    It follows from A_h - A_{h>m} = ∫ min(s_h, s_m) = A_m - A_{m>h}; reported tables of several
    models on one corruption must all imply the same human area.
    """
    if hmri <= 0:
        raise ValueError(f"hmri must be > 0 to imply a human area, got {hmri!r}")
    return r_model * (1.0 - mrsi) / hmri


def compare(
    human: Estimate,
    model: Estimate,
    *,
    level: float,
    weighting: Weighting = None,
    tol: float = DEFAULT_TOL,
    support: tuple[float, float] | None = None,
    scenario_level: float,
) -> dict:
    """Human-aware metrics of ``model`` against ``human`` with paired bootstrap intervals.

    ``level``: of the intervals (``estimation.level``; the estimates' own, in the workflow).
    Areas are taken over ``support`` (the human reference's Δv range; None: [0, 1]). Point values
    come from the two fitted curves. Replicate b of the model is paired with
    replicate b of the humans (the two are independent resamples of independent data, so the
    pair is one draw of the joint bootstrap); the first ``min(B_h, B_m)`` pairs are used.

    Returns
    -------
    dict: everything :func:`human_aware` returns, plus ``R`` (the model's R̂ under
    ``weighting``), ``<name>_lo`` / ``<name>_hi`` percentile bounds at ``level`` for ``R``,
    ``A_h``, ``A_m``, ``A_h_gt_m``, ``A_m_gt_h``, ``HMRI`` and ``MRSI`` (NaN when either estimate
    has no replicates), ``scenario_support`` (share of replicate pairs whose scenario equals the
    point scenario), ``scenario_label`` (the point scenario where that share is at least
    ``scenario_level``, else ``"undetermined"``), ``replicates`` (``{"HMRI": array, "MRSI":
    array}`` of the replicate pairs, for paired differences), ``n_boot`` (pairs used) and
    ``level``.
    """
    if len(human.grid) != len(model.grid) or not np.allclose(human.grid, model.grid, atol=1e-12):
        raise ValueError(
            f"human and model curves are on different grids ({len(human.grid)} vs {len(model.grid)} points)"
        )
    out = human_aware(
        human.values, model.values, human.grid, weighting=weighting, tol=tol, support=support
    )
    out["R"] = out["A_m"]
    B = min(human.n_boot, model.n_boot)
    names = ("R", "A_h", "A_m", "A_h_gt_m", "A_m_gt_h", "HMRI", "MRSI")
    if B == 0:
        for name in names:
            out[f"{name}_lo"] = out[f"{name}_hi"] = float("nan")
        out["scenario_support"] = float("nan")
        out["replicates"] = {"HMRI": np.zeros(0), "MRSI": np.zeros(0)}
    else:
        s_h = human.replicates[:B].astype(np.float64)
        s_m = model.replicates[:B].astype(np.float64)
        a_h, a_m, a_hm, a_mh = _areas(s_h, s_m, human.grid, weighting, support)
        hmri, mrsi = _indices(a_h, a_m, a_hm, a_mh)
        reps = {"R": a_m, "A_h": a_h, "A_m": a_m, "A_h_gt_m": a_hm, "A_m_gt_h": a_mh}
        reps |= {"HMRI": hmri, "MRSI": mrsi}
        for name in names:
            lo, hi = percentile_interval(reps[name], level)
            out[f"{name}_lo"], out[f"{name}_hi"] = float(lo), float(hi)
        out["replicates"] = {"HMRI": hmri, "MRSI": mrsi}
        labels = [scenario(h, m, tol) for h, m in zip(a_hm, a_mh, strict=True)]
        out["scenario_support"] = float(np.mean([lab == out["scenario"] for lab in labels]))
    out["scenario_label"] = scenario_label(out["scenario"], out["scenario_support"], scenario_level)
    out["n_boot"] = int(B)
    out["level"] = float(level)
    return out


__all__ = [
    "DEFAULT_TOL",
    "SCENARIOS",
    "SCENARIO_HUMANS_BETTER",
    "SCENARIO_IDENTICAL",
    "SCENARIO_MIXED",
    "SCENARIO_MODEL_BETTER",
    "SCENARIO_UNDETERMINED",
    "compare",
    "hmri",
    "human_aware",
    "implied_human_area",
    "mrsi",
    "scenario",
    "scenario_label",
    "support_mask",
]
