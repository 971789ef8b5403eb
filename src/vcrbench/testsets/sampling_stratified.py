"""Δv-stratified sampling: the paper's c ~ U(C), kept under per-bin quotas of Δv.

The paper's estimand averages over P(x, x′ | v): at a given Δv, the images and parameters that
uniform sampling of the domain C puts there. Δv-uniform sampling (:mod:`vcrbench.testsets.sampling`)
reaches every bin but moves all parameters of a corruption along one path, so for a multi-parameter
corruption it changes which corruptions stand at a given Δv. This sampler keeps them:

1. Candidates are drawn as parameter-uniform sampling draws its samples: candidate k shows entry k
   of the image sequence (:func:`vcrbench.testsets.sampling.image_sequence`), has parameters c ~
   U(C) and the seed ``derive_seed(seed, "sample", corruption, k)``; the first N candidates are
   exactly the parameter-uniform manifest. Every candidate is corrupted and its Δv measured.
2. Strata are Alg. 1's bins 0..bins−2 (Δv = 1, bin bins−1, joins the last one). After the first N
   candidates, more are drawn while some stratum holds fewer than the level T = ⌈N / strata hit
   so far⌉ and can plausibly reach it: at its observed rate (at most 3 / candidates drawn for a
   stratum not hit yet), the candidates it needs fit within the cap (``max_candidates`` · N in
   all). A stratum not hit, or hit too rarely, is left short.
3. Quotas: the water level L, the smallest with Σ_j min(h_j, L) ≥ N over the strata's hits h_j;
   stratum j keeps its first min(h_j, L) candidates (a few strata at the level keep one fewer, so
   that exactly N are kept). Which candidates land in a stratum does not depend on their values
   inside it, and the stopping rule looks only at counts, so the candidates kept in a stratum are
   independent draws from U(C) restricted to it (with the images in their conditional proportion).

The manifest has exactly N rows, in candidate order, with the columns of the other modes plus
``candidate`` (its index k), ``measured_dv`` and ``uniform_dv``: row i's ``uniform_dv`` is the Δv of
candidate i (not of the row's sample), so the column holds the first N candidates, the N draws of
c ~ U(C) that parameter-uniform sampling makes: the paper's Table 2 and Fig. 4/11 quantity
(source ``vcr-parameter-uniform`` in ``coverage.csv``). A shard regenerates each kept sample from
its image, parameters and seed: the same pixels, hence the same Δv and bin. The cost is the
candidates' corruptions and Δv computations in the manifest job
(``attrs["sampling"]["candidates"]``; their number / N is the cost per kept sample), plus N again in
the shards.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping

import numpy as np

from vcrbench import schema
from vcrbench.bins import bin_index
from vcrbench.corruptions import Corruption
from vcrbench.seeding import rng

log = logging.getLogger(__name__)

MODE = "dv-stratified"
#: Options of dv-stratified mode and their defaults (config: sampling.options), from the schema's
#: ``$defs/dv_stratified_options``.
STRATIFIED_DEFAULTS = schema.definition_defaults("dv_stratified_options")


def water_level(hits: np.ndarray, n: int) -> int:
    """The smallest L with Σ min(hits, L) ≥ n (every stratum filled up to L where it can be)."""
    hits = np.asarray(hits, dtype=np.int64)
    if hits.sum() < n:
        raise ValueError(f"{int(hits.sum())} candidates cannot fill {n} samples")
    lo, hi = 0, int(hits.max())
    while lo < hi:
        mid = (lo + hi) // 2
        if np.minimum(hits, mid).sum() >= n:
            hi = mid
        else:
            lo = mid + 1
    return lo


def quotas(hits: np.ndarray, n: int, gen: np.random.Generator) -> np.ndarray:
    """Samples kept per stratum: min(hits, L), less one in as many strata at the level as needed
    (chosen by ``gen``) so that the quotas sum to ``n``."""
    level = water_level(hits, n)
    keep = np.minimum(hits, level)
    excess = int(keep.sum()) - n
    if excess:
        at_level = np.flatnonzero(keep == level)
        keep[gen.permutation(at_level)[:excess]] -= 1
    return keep


def strata_of(dv: np.ndarray, bins: int) -> np.ndarray:
    """Stratum of each Δv: Alg. 1's bin, with Δv = 1 (the last bin) in the one below it."""
    return np.minimum(bin_index(dv, bins), bins - 2)


def _next_round(hits: np.ndarray, drawn: int, n: int, cap: int, batch: int) -> int:
    """Candidates to draw next: enough for the short strata that the cap can fill (0: stop)."""
    seen = int((hits > 0).sum())
    target = math.ceil(n / max(seen, 1))
    room = cap - drawn
    need = {}
    for j in np.flatnonzero(hits < target):
        # Candidates until stratum j is expected to hold `target`, at its observed rate; a
        # stratum not hit yet at the highest rate that is plausible then (3 / drawn, the "rule of
        # three" 95 % bound), so that drawing stops once even that rate could not fill it.
        seen_hits = hits[j] if hits[j] > 0 else 3
        need[int(j)] = math.ceil((target - hits[j]) * drawn / seen_hits)
    fillable = [j for j, k in need.items() if k <= room]
    if not fillable or room <= 0:
        return 0
    wanted = math.ceil(1.1 * max(need[j] for j in fillable))
    return min(room, n, max(batch, wanted))


def stratified_draws(
    corruption: Corruption, n: int, seed: int, draw: Callable, options: Mapping
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], np.ndarray, dict, np.ndarray]:
    """Draw candidates and keep ``n`` of them under per-stratum quotas (see the module docstring).

    ``draw(start, params)`` corrupts and measures candidates ``start, start + 1, …`` with the
    given parameter arrays and returns their clean-set rows and Δv
    (:func:`vcrbench.testsets.sampling.make_manifest` supplies it). Options: ``max_candidates``,
    ``bins``, ``batch_size`` (the smallest round after the first). Returns the kept candidates'
    indices (increasing), clean-set rows, parameters and Δv, the run's description, and the Δv
    of the first ``n`` candidates (the parameter-uniform draws).
    """
    max_candidates, bins = float(options["max_candidates"]), int(options["bins"])
    if not max_candidates >= 1:
        raise ValueError(
            f"dv-stratified option max_candidates must be at least 1, not {max_candidates}"
        )
    if bins < 3:
        raise ValueError(f"dv-stratified option bins must be at least 3, not {bins}")
    cap, batch = max(n, math.floor(max_candidates * n)), int(options["batch_size"])
    gen_params = rng(seed, "manifest", corruption.name, "params")
    rows, params, dv = [], {p: [] for p in corruption.param_names}, []
    drawn, size, rounds = 0, n, 0
    while size:
        new = corruption.sample_uniform(size, gen_params)
        new_rows, new_dv = draw(drawn, new)
        rows.append(new_rows)
        dv.append(new_dv)
        for p in params:
            params[p].append(new[p])
        drawn, rounds = drawn + size, rounds + 1
        hits = np.bincount(strata_of(np.concatenate(dv), bins), minlength=bins - 1)
        size = _next_round(hits, drawn, n, cap, batch)

    dv_all = np.concatenate(dv)
    strata = strata_of(dv_all, bins)
    keep_n = quotas(hits, n, rng(seed, "manifest", corruption.name, "quotas"))
    kept = np.sort(
        np.concatenate([np.flatnonzero(strata == j)[: keep_n[j]] for j in range(bins - 1)])
    )
    kept_params = {p: np.concatenate(v)[kept] for p, v in params.items()}
    info = _report(corruption.name, hits, keep_n, drawn, n, cap, rounds)
    return kept, np.concatenate(rows)[kept], kept_params, dv_all[kept], info, dv_all[:n]


def _report(name: str, hits, keep_n, drawn: int, n: int, cap: int, rounds: int) -> dict:
    """The run's description (``attrs["sampling"]``), logged with a warning for short strata."""
    level = int(keep_n.max())
    unreached = [int(j) for j in np.flatnonzero(hits == 0)]
    rare = [int(j) for j in np.flatnonzero((hits > 0) & (hits < level))]
    info = {
        "mode": MODE,
        "candidates": int(drawn),
        "cost": drawn / n,
        "cap": int(cap),
        "rounds": int(rounds),
        "level": level,
        "kept_per_stratum": [int(k) for k in keep_n],
        "unreached_strata": unreached,
        "short_strata": rare,
    }
    log.info(
        "%s: dv-stratified, %d candidates for %d samples (%.2f per sample), %d per stratum",
        name,
        drawn,
        n,
        drawn / n,
        level,
    )
    if unreached or rare:
        log.warning(
            "%s: dv-stratified could not fill every Δv bin to %d samples within %d candidates "
            "(sampling.options.max_candidates = %g per sample): bins that no candidate reached: "
            "%s; reached too rarely to fill: %s. Their share went to the other bins; a wider "
            "domain (sampling.domain_set, or the corruption's domain) or dv-uniform sampling "
            "reaches them.",
            name,
            level,
            cap,
            cap / n,
            unreached or "none",
            rare or "none",
        )
    return info
