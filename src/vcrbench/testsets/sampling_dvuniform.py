"""Δv-uniform sampling (``sampling.mode: dv-uniform``, the default): per-image monotone maps from
a corruption's path parameter t to Δv, fitted on a pilot, and the inverse draws that make Δv
uniform (the steps are in :mod:`vcrbench.testsets.sampling`'s docstring, which calls
:func:`dv_uniform_params` for a manifest).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import isotonic_regression

from vcrbench.bins import counts_per_bin
from vcrbench.corruptions import Corruption
from vcrbench.seeding import rng
from vcrbench.settings import VifSettings
from vcrbench.testsets import measure
from vcrbench.testsets.coverage import threshold
from vcrbench.vocab import N_BINS

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- monotone maps


#: How far (in Δv) above its fitted top a map is extrapolated to the end of the path.
REACH = 1.0 / (N_BINS - 1)


@dataclass(frozen=True)
class MonotoneMap:
    """A non-decreasing piecewise-linear map t → Δv (isotonic fit) and its inverse."""

    t: np.ndarray  # knots, strictly increasing
    v: np.ndarray  # fitted Δv at the knots, strictly increasing

    @classmethod
    def fit(cls, t, v) -> MonotoneMap:
        t, v = np.asarray(t, dtype=np.float64), np.asarray(v, dtype=np.float64)
        order = np.argsort(t, kind="stable")
        t, v = t[order], v[order]
        # Rounded so that float noise of the fit does not split a plateau.
        fitted = np.round(isotonic_regression(v, increasing=True).x, 12)
        # Collapse plateaus to one knot at their mean t, so that the inverse is a function.
        values, start = np.unique(fitted, return_index=True)
        ends = np.append(start[1:], len(fitted))
        knots = np.array([t[a:b].mean() for a, b in zip(start, ends, strict=True)])
        return cls(knots, values)

    @property
    def low(self) -> float:
        return float(self.v[0])

    @property
    def high(self) -> float:
        return float(self.v[-1])

    def __call__(self, t) -> np.ndarray:
        return np.interp(t, self.t, self.v)

    def inverse(self, v) -> np.ndarray:
        """t in [0, 1] whose fitted Δv is ``v``.

        Beyond the fitted knots the map is extended linearly to the ends of the path: down to
        (0, 0) and up to (1, high + ``REACH``), since plateaus of the fit pull its end knots inwards
        and the path's ends are where Δv is smallest and largest.
        """
        t, vals = self.t, self.v
        if t[0] > 0 and vals[0] > 0:
            t, vals = np.append(0.0, t), np.append(0.0, vals)
        if t[-1] < 1:
            t, vals = np.append(t, 1.0), np.append(vals, vals[-1] + REACH)
        if len(t) == 1:
            return np.full(np.shape(v), float(t[0]))
        return np.clip(np.interp(v, vals, t), 0.0, 1.0)


def fit_maps(
    image_ids: np.ndarray, t: np.ndarray, dv: np.ndarray, min_points: int
) -> tuple[MonotoneMap, dict[str, MonotoneMap]]:
    """The pooled map and the per-image maps of images with at least ``min_points`` points.

    An image's own points rarely reach both ends of the path, so beyond them its map follows the
    pooled map's shape, shifted to meet the image's fit (clipped to [0, 1]).
    """
    pooled = MonotoneMap.fit(t, dv)
    per_image = {}
    images, counts = np.unique(image_ids, return_counts=True)
    # Only images with enough points (with ImageNet-sized sets, usually none) are looked at.
    for image in images[counts >= min_points]:
        sel = image_ids == image
        per_image[str(image)] = _with_pooled_tails(MonotoneMap.fit(t[sel], dv[sel]), pooled)
    return pooled, per_image


def _with_pooled_tails(own: MonotoneMap, pooled: MonotoneMap) -> MonotoneMap:
    t_lo, t_hi = own.t[0], own.t[-1]
    below = np.unique(np.append(pooled.t[pooled.t < t_lo], 0.0)) if t_lo > 0 else np.zeros(0)
    above = np.unique(np.append(pooled.t[pooled.t > t_hi], 1.0)) if t_hi < 1 else np.zeros(0)
    below = below[below < t_lo]
    above = above[above > t_hi]
    v_below = np.clip(own.v[0] - (pooled(t_lo) - pooled(below)), 0.0, own.v[0])
    v_above = np.clip(own.v[-1] + (pooled(above) - pooled(t_hi)), own.v[-1], 1.0)
    t_all = np.concatenate([below, own.t, above])
    v_all = np.concatenate([v_below, own.v, v_above])
    # Keep the knots strictly increasing in v (tails may be flat where the pooled map is).
    keep = np.concatenate([[True], np.diff(v_all) > 1e-12])
    return MonotoneMap(t_all[keep], v_all[keep])


# --------------------------------------------------------------------------- dv-uniform


def _stratified(n: int, gen: np.random.Generator) -> np.ndarray:
    """n values in [0, 1), one in each of n equal strata, in random order."""
    return (gen.permutation(n) + gen.random(n)) / n


def dv_uniform_params(
    corruption: Corruption,
    clean_set,
    frame: pd.DataFrame,
    seed: int,
    vif_settings: VifSettings,
    options: Mapping,
):
    """dv-uniform parameters of the samples of ``frame``, their target Δv and the pilot's
    summary: the four steps of the module docstring, each sample's path position t coming from a
    pilot round (steps 1-3, measured) or from the maps (step 4)."""
    n = len(frame)
    name = corruption.name
    bins, denominator = int(options["bins"]), int(options["denominator"])
    min_count = options["min_count"]
    min_count = threshold(n) if min_count is None else int(min_count)
    pilot_first = min(n, max(1, math.ceil(options["pilot_fraction"] * n)))
    pilot_max = min(n, max(pilot_first, math.floor(options["max_pilot_fraction"] * n)))

    gen_side = rng(seed, "manifest", name, "sides")
    sides = {p: gen_side.random(n) for p in corruption.param_names}
    gen_t = rng(seed, "manifest", name, "pilot")
    gen_target = rng(seed, "manifest", name, "targets")
    draw = _DvUniformDraw(corruption, clean_set, frame, sides, vif_settings, options)

    first = draw.first_round(pilot_first, gen_t)
    used, rounds = draw.refine(first, pilot_first, gen_target)
    used, rounds = draw.fill_short_bins(
        used, rounds, pilot_max, bins, denominator, min_count, gen_target
    )
    per_image = draw.aim_rest(used, gen_target)
    counts = counts_per_bin(draw.dv[:used], bins)[:denominator]
    info = _pilot_info(draw.dv[:used], first, rounds, min_count, counts, len(per_image))
    log.info(
        "%s: dv-uniform pilot of %d samples in %d rounds after the first; bins short after the "
        "pilot: %s",
        name,
        used,
        rounds,
        info["pilot_short_bins"],
    )
    return corruption.path(draw.t, sides), draw.target, info


class _DvUniformDraw:
    """One dv-uniform draw under way: each sample's path position ``t``, its target Δv
    (``target``) and its measured Δv (``dv``), NaN until set, and the steps that set them."""

    def __init__(self, corruption, clean_set, frame, sides, vif_settings, options):
        n = len(frame)
        self.corruption, self.clean_set, self.sides = corruption, clean_set, sides
        self.vif_settings, self.options = vif_settings, options
        self.min_points = int(options["min_points_per_image"])
        self.t = np.full(n, np.nan)
        self.target = np.full(n, np.nan)
        self.dv = np.full(n, np.nan)
        self.images = frame["image_id"].to_numpy().astype(str)
        self.seeds = frame["seed"].to_numpy()

    def measure(self, lo: int, hi: int) -> None:
        """Measure the Δv of samples lo..hi−1 at their t."""
        sel = slice(lo, hi)
        params = self.corruption.path(self.t[sel], {k: v[sel] for k, v in self.sides.items()})
        self.dv[sel] = measure.samples_dv(
            self.corruption,
            self.clean_set,
            self.images[sel],
            params,
            self.seeds[sel],
            self.vif_settings,
            self.options["device"],
            int(self.options["batch_size"]),
        )

    def maps(self, upto: int):
        """The pooled and per-image maps of the first ``upto`` (measured) samples."""
        return fit_maps(self.images[:upto], self.t[:upto], self.dv[:upto], self.min_points)

    def aim(self, lo: int, hi: int, values: np.ndarray, pooled, per_image) -> None:
        """Samples lo..hi−1 aim at Δv ``values`` (fractions of their image's reachable range
        where ``values`` is None)."""
        for k, i in enumerate(range(lo, hi)):
            m = per_image.get(self.images[i], pooled)
            self.target[i] = values[k]
            self.t[i] = float(m.inverse(values[k]))

    def first_round(self, pilot_first: int, gen_t: np.random.Generator) -> int:
        """1. pilot, first round: t stratified along the path, both ends included; returns its
        size."""
        t = self.t
        first = pilot_first if pilot_first < 6 else math.ceil(0.4 * pilot_first)
        t[:first] = _stratified(first, gen_t)
        if first >= 2:
            t[int(np.argmin(t[:first]))], t[int(np.argmax(t[:first]))] = 0.0, 1.0
        self.measure(0, first)
        return first

    def refine(self, used: int, pilot_first: int, gen_target: np.random.Generator):
        """2. refinement rounds: Δv stratified over what each image's map reaches, through the
        map fitted so far; each round resolves the map where the previous one was coarse.
        Returns ``(samples used, rounds)``."""
        rounds = 0
        while used < pilot_first:
            k = min(pilot_first - used, max(1, math.ceil(0.3 * pilot_first)))
            pooled, per_image = self.maps(used)
            u = _stratified(k, gen_target)
            values = _across_reach(self.images[used : used + k], u, pooled, per_image)
            self.aim(used, used + k, values, pooled, per_image)
            self.measure(used, used + k)
            used, rounds = used + k, rounds + 1
        return used, rounds

    def fill_short_bins(
        self, used, rounds, pilot_max, bins, denominator, min_count, gen_target
    ) -> tuple[int, int]:
        """3. rounds aimed at the counted bins still short of min_count, while the pilot budget
        ``pilot_max`` and ``max_rounds`` last. Returns ``(samples used, rounds)``."""
        edges = np.arange(bins + 1) / (bins - 1)
        while used < pilot_max and rounds < int(self.options["max_rounds"]):
            pooled, per_image = self.maps(used)
            counts, short = _short_bins(self.dv[:used], bins, denominator, min_count, edges)
            if not short:
                break
            # Ask for a little more than missing: some targets land in a neighbouring bin.
            wanted = np.concatenate(
                [np.full(math.ceil(1.5 * (min_count - counts[j])), j) for j in short]
            )
            wanted = list(gen_target.permutation(wanted))
            # At most half of the remaining budget per round: later rounds use better maps.
            k = min(len(wanted), max(len(short), (pilot_max - used) // 2), pilot_max - used)
            images = self.images[used : used + k]
            values = _into_bins(images, wanted, edges, pooled, per_image, gen_target)
            self.aim(used, used + k, values, pooled, per_image)
            self.measure(used, used + k)
            used, rounds = used + k, rounds + 1
        return used, rounds

    def aim_rest(self, used: int, gen_target: np.random.Generator) -> dict:
        """4. the main sample, from the maps of the pilot (not measured); returns the per-image
        maps."""
        n = len(self.t)
        pooled, per_image = self.maps(used)
        rest = n - used
        if rest:
            u = _stratified(rest, gen_target)
            values = _across_reach(self.images[used:n], u, pooled, per_image)
            self.aim(used, n, values, pooled, per_image)
        return per_image


def _short_bins(dv: np.ndarray, bins: int, denominator: int, min_count: int, edges):
    """``(counts of the counted bins, the bins short of min_count within the pilot's reach)``:
    bins beyond what the pilot measured by more than ``REACH`` are out of reach."""
    counts = counts_per_bin(dv, bins)[:denominator]
    short = [j for j in range(denominator) if counts[j] < min_count]
    reach_lo, reach_hi = np.min(dv), np.max(dv) + REACH
    return counts, [j for j in short if edges[j + 1] > reach_lo and edges[j] <= reach_hi]


def _pilot_info(pilot_dv, first, rounds, min_count, counts, per_image_maps: int) -> dict:
    """What the manifest records of a dv-uniform pilot (``DataFrame.attrs["sampling"]``)."""
    return {
        "mode": "dv-uniform",
        "n_pilot": len(pilot_dv),
        "pilot_first": int(first),
        "rounds": int(rounds),
        "min_count": int(min_count),
        "pilot_short_bins": [int(j) for j in np.flatnonzero(counts < min_count)],
        "pilot_dv": [float(x) for x in pilot_dv],
        "per_image_maps": per_image_maps,
    }


def _across_reach(images: np.ndarray, u: np.ndarray, pooled, per_image) -> np.ndarray:
    """Δv targets at fractions ``u`` of the range each image's map (else the pooled map) reaches."""
    values = np.empty(len(images))
    for j, image in enumerate(images):
        m = per_image.get(image, pooled)
        values[j] = m.low + (m.high - m.low) * u[j]
    return values


def _into_bins(images, wanted: list, edges, pooled, per_image, gen) -> np.ndarray:
    """Δv targets for samples of ``images`` in the ``wanted`` bins (taken from the list as they
    are given out); a sample whose image's map reaches none of them aims across its reach."""
    values = np.empty(len(images))
    for j, image in enumerate(images):
        m = per_image.get(image, pooled)
        # Each sample's image is fixed: give it a wanted bin that its map reaches, if any.
        top = m.high + REACH
        fits = [w for w, b in enumerate(wanted) if edges[b + 1] > m.low and edges[b] < top]
        frac = 0.1 + 0.8 * gen.random()
        if fits:
            b = wanted.pop(fits[int(gen.integers(len(fits)))])
            # The middle 80 % of the part of the bin this image reaches.
            lo, hi = max(edges[b], m.low), min(edges[b + 1], top)
            values[j] = lo + (hi - lo) * frac
        else:
            values[j] = m.low + (m.high - m.low) * frac
    return values
