"""Corrupt and measure: the one step every stage that makes stimuli shares.

Test-set shards (:mod:`vcrbench.testset`), the Δv-uniform pilot (:mod:`vcrbench.sampling`) and the
placement of human conditions on the Δv axis (:mod:`vcrbench.humans.mapping`) all corrupt uint8
images and measure Δv = 1 − VIF on exactly those uint8 pixels, the ones a model is shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from vcrbench.corruptions import Corruption


def corrupt_batch(
    corruption: Corruption,
    clean: np.ndarray,
    params: Mapping[str, Sequence[float]],
    seeds: Sequence[int],
    within: str = "domain",
) -> np.ndarray:
    """Corrupt ``clean[i]`` with ``{k: params[k][i]}`` and ``seeds[i]``; uint8 (N, H, W, 3)."""
    out = np.empty_like(clean)
    for i in range(len(clean)):
        p = {k: float(v[i]) for k, v in params.items()}
        out[i] = corruption.apply(clean[i], p, int(seeds[i]), within=within)
    return out


def visual_change(
    clean: np.ndarray, corrupted: np.ndarray, vif_variant: str = "kumar", device=None
) -> tuple[np.ndarray, np.ndarray]:
    """VIF and Δv of uint8 batches (:func:`vcrbench.vif.delta_v`, reference first), as float64;
    a non-finite value raises instead of passing as a number."""
    from vcrbench.vif import delta_v

    vif, dv = delta_v(clean, corrupted, variant=vif_variant, device=device)
    vif, dv = np.asarray(vif, dtype=np.float64), np.asarray(dv, dtype=np.float64)
    if not (np.all(np.isfinite(vif)) and np.all(np.isfinite(dv))):
        raise ValueError("VIF returned a non-finite value")
    return vif, dv


def samples_dv(
    corruption: Corruption,
    clean_set,
    image_ids: np.ndarray,
    params: Mapping[str, np.ndarray],
    seeds: np.ndarray,
    vif_variant: str,
    device,
    batch_size: int,
) -> np.ndarray:
    """Δv of the given samples (images of ``clean_set`` by id, their parameters and seeds),
    corrupted exactly as their shard will corrupt them, ``batch_size`` at a time."""
    out = np.empty(len(image_ids))
    for start in range(0, len(image_ids), batch_size):
        sel = slice(start, start + batch_size)
        clean = clean_set.images(list(image_ids[sel]))
        corrupted = corrupt_batch(
            corruption, clean, {k: v[sel] for k, v in params.items()}, seeds[sel]
        )
        out[sel] = visual_change(clean, corrupted, vif_variant, device)[1]
    return out
