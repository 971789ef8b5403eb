"""Visually similar corruptions (VCR paper, Section 4.4 and Appendix E.1).

Two corruptions are visually similar for humans when their human curves do not differ
significantly: the paper's test is that the 83% confidence bands of the two curves overlap over
the whole Δv range. (Two independent estimates with similar standard errors whose 83–84%
intervals do not overlap differ at about the 5% level: Payton, Greenstone & Schenker 2003.) The
bands are pointwise by default, as the paper's; simultaneous (sup-t) bands are the option that
keeps "overlap at every Δv" at that level for whole curves (docs/estimation.md). Similar corruptions
form classes whose members can share human data. Give the human anchors as clean outcomes (not
numbers) so that the bands have width at Δv = 0: two fixed, different anchors never overlap there.

The cheap screening experiment ("same corruption or not?") is judged with a binomial test against
chance: if people tell two corruptions apart no better than chance, they are candidates for one
class.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import numpy as np

from vcrbench.estimation import Estimate

#: Band level of the paper's similarity test.
SIMILARITY_LEVEL = 0.83
#: Band kind of the paper's test: pointwise percentile bands (``"simultaneous"``: sup-t bands).
SIMILARITY_BAND = "pointwise"


def bands_overlap(lo_a, hi_a, lo_b, hi_b) -> np.ndarray:
    """Pointwise overlap of two bands on the same grid: ``lo_a <= hi_b and lo_b <= hi_a``."""
    arrays = [np.asarray(x, dtype=np.float64) for x in (lo_a, hi_a, lo_b, hi_b)]
    if len({a.shape for a in arrays}) != 1:
        raise ValueError(f"bands must have the same shape, got {[a.shape for a in arrays]}")
    if any(np.isnan(a).any() for a in arrays):
        raise ValueError("bands contain NaN (an estimate without bootstrap replicates?)")
    lo_a, hi_a, lo_b, hi_b = arrays
    return (lo_a <= hi_b) & (lo_b <= hi_a)


def _band(item, level: float, band: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    if isinstance(item, Estimate):
        if item.n_boot == 0:
            raise ValueError("an Estimate without bootstrap replicates has no band")
        lo, hi = item.band(level, band)
        return lo, hi, item.grid
    lo, hi = item
    return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64), None


def similar(a, b, *, level: float, band: str) -> dict:
    """The paper's test: do the ``level`` bands of two human curves overlap everywhere?

    ``a`` and ``b`` are :class:`~vcrbench.estimation.Estimate` objects (bands from their
    replicates) or ``(lo, hi)`` pairs on a common grid. ``level``: ``estimation.similarity_level``
    (the paper's :data:`SIMILARITY_LEVEL`); ``band``: ``estimation.similarity_band``,
    ``"pointwise"`` (percentile bands at each Δv, the paper's, :data:`SIMILARITY_BAND`) or
    ``"simultaneous"`` (sup-t bands). Asking
    pointwise bands to overlap at every Δv is a test at every Δv at once: it called two samples
    of one human-like curve dissimilar in 67% of trials, simultaneous bands in 7%
    (docs/estimation.md).

    Returns
    -------
    dict: ``similar`` (bool), ``overlap_fraction`` (share of grid points where the bands
    overlap), ``max_gap`` (largest vertical distance between non-overlapping bands, 0 if none) and
    ``first_gap_v`` (the first Δv without overlap, None if none; grid index when no grid is known).
    """
    lo_a, hi_a, grid_a = _band(a, level, band)
    lo_b, hi_b, grid_b = _band(b, level, band)
    if grid_a is not None and grid_b is not None and not np.array_equal(grid_a, grid_b):
        raise ValueError("the two estimates are on different grids")
    grid = grid_a if grid_a is not None else grid_b
    overlap = bands_overlap(lo_a, hi_a, lo_b, hi_b)
    gap = np.maximum(lo_a - hi_b, lo_b - hi_a)
    first = None
    if not overlap.all():
        i = int(np.argmin(overlap))
        first = float(grid[i]) if grid is not None else i
    return {
        "similar": bool(overlap.all()),
        "overlap_fraction": float(overlap.mean()),
        "max_gap": float(max(gap.max(), 0.0)),
        "first_gap_v": first,
    }


def screening_test(
    n_correct: int, n_trials: int, *, chance: float = 0.5, alpha: float
) -> dict:
    """Binomial test of a "same corruption or not?" screening experiment against chance.

    ``n_correct`` of ``n_trials`` same/different judgements were right. The one-sided test asks
    whether people do better than ``chance``; if not (p >= ``alpha``), the two corruptions are
    candidates for one class (``alpha``: ``humans.screening.alpha``). Not rejecting is weak evidence
    when ``n_trials`` is small: report the interval too.

    Returns
    -------
    dict: ``accuracy``, ``p_value``, ``ci_lo``/``ci_hi`` (two-sided Clopper–Pearson interval at
    1 - alpha), ``distinguishable`` (p < alpha), ``n_trials``, ``chance``.
    """
    n_correct, n_trials = int(n_correct), int(n_trials)
    if n_trials <= 0:
        raise ValueError(f"n_trials must be positive, got {n_trials}")
    if not 0 <= n_correct <= n_trials:
        raise ValueError(f"n_correct must lie in [0, n_trials={n_trials}], got {n_correct}")
    if not 0 < chance < 1:
        raise ValueError(f"chance must lie in (0, 1), got {chance}")
    from scipy.stats import binomtest  # here: scipy.stats is over a second of a job's start-up

    result = binomtest(n_correct, n_trials, p=chance, alternative="greater")
    ci = binomtest(n_correct, n_trials, p=chance).proportion_ci(1 - alpha, method="exact")
    return {
        "accuracy": n_correct / n_trials,
        "p_value": float(result.pvalue),
        "ci_lo": float(ci.low),
        "ci_hi": float(ci.high),
        "distinguishable": bool(result.pvalue < alpha),
        "n_trials": n_trials,
        "chance": float(chance),
    }


def _maximal_cliques(names: list[str], adj: dict[str, set[str]]) -> list[frozenset[str]]:
    """All maximal cliques (Bron–Kerbosch with pivoting; the graphs here have ~14 nodes)."""
    cliques: list[frozenset[str]] = []

    def expand(r: set[str], p: set[str], x: set[str]) -> None:
        if not p and not x:
            cliques.append(frozenset(r))
            return
        pivot = max(p | x, key=lambda u: (len(adj[u] & p), u))
        for v in sorted(p - adj[pivot]):
            expand(r | {v}, p & adj[v], x & adj[v])
            p = p - {v}
            x = x | {v}

    expand(set(), set(names), set())
    return cliques


def classes_found(
    items: Mapping[str, object], *, level: float, band: str
) -> list[list[str]]:
    """Group corruptions into classes of mutually similar human curves.

    ``items`` maps a corruption name to its human :class:`~vcrbench.estimation.Estimate` (or a
    ``(lo, hi)`` band); ``level`` and ``band`` as :func:`similar`'s. Similarity is not transitive,
    so a class is a clique: every pair in it is similar, as sharing human data across the class
    requires. Classes are taken greedily: the largest clique first (ties: the alphabetically first),
    its members removed, and so on; every corruption ends in exactly one class (possibly alone).

    Returns
    -------
    list of classes, each a sorted list of names; larger classes first, then alphabetical.
    """
    names = sorted(items)
    pairs = [
        (a, b)
        for a, b in itertools.combinations(names, 2)
        if similar(items[a], items[b], level=level, band=band)["similar"]
    ]
    return classes_from_pairs(names, pairs)


def classes_from_pairs(names, pairs) -> list[list[str]]:
    """:func:`classes_found`'s greedy cliques from the ``pairs`` of ``names`` found similar."""
    names = sorted(names)
    adj: dict[str, set[str]] = {name: set() for name in names}
    for a, b in pairs:
        adj[a].add(b)
        adj[b].add(a)
    classes: list[list[str]] = []
    remaining = set(names)
    while remaining:
        sub = {name: adj[name] & remaining for name in remaining}
        cliques = _maximal_cliques(sorted(remaining), sub)
        best = min(cliques, key=lambda c: (-len(c), sorted(c)))
        classes.append(sorted(best))
        remaining -= best
    return sorted(classes, key=lambda c: (-len(c), c))


__all__ = [
    "SIMILARITY_BAND",
    "SIMILARITY_LEVEL",
    "bands_overlap",
    "screening_test",
    "similar",
    "classes_found",
    "classes_from_pairs",
]
