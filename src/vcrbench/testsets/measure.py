"""Corrupt and measure: the one step every stage that makes stimuli shares.

Test-set shards (:mod:`vcrbench.testsets.testset`), the Δv-uniform pilot
(:mod:`vcrbench.testsets.sampling`) and the placement of human conditions on the Δv axis
(:mod:`vcrbench.humans.mapping`) all corrupt uint8 images and measure Δv = 1 − VIF on exactly those
uint8 pixels, the ones a model is shown.

The VCR authors' pipeline (``dataset.resolution: stored``, :func:`corrupt_stored`) corrupts and
measures the image at its stored resolution instead and shows the model its resized, cropped
copy; ``vif.grey: uint8`` rounds the grey images to 8 bits as OpenCV does.
:func:`corrupt_and_measure` takes where to measure from the clean set (``CleanSet.stored``) and how
to measure from the config's ``vif`` block, one :class:`vcrbench.settings.VifSettings` that every
function here takes whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from vcrbench.settings import VifSettings

#: The schema's ``vif`` defaults, for direct library use (a workflow job passes its own).
_DEFAULT = VifSettings()

if TYPE_CHECKING:  # annotations only: the registry's imports take a second, Δv needs none of it
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
    clean: np.ndarray,
    corrupted: np.ndarray,
    vif_settings: VifSettings = _DEFAULT,
    device=None,
) -> tuple[np.ndarray, np.ndarray]:
    """VIF and Δv of uint8 batches (:func:`vcrbench.vif.delta_v`, reference first, measured as
    ``vif_settings`` says), as float64; a non-finite value raises instead of passing as a number."""
    from vcrbench.vif import delta_v

    vif, dv = delta_v(clean, corrupted, vif_settings, device=device)
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
    vif_settings: VifSettings,
    device,
    batch_size: int,
) -> np.ndarray:
    """Δv of the given samples (images of ``clean_set`` by id, their parameters and seeds),
    corrupted exactly as their shard will corrupt them, ``batch_size`` at a time."""
    out = np.empty(len(image_ids))
    for start in range(0, len(image_ids), batch_size):
        sel = slice(start, start + batch_size)
        out[sel] = corrupt_and_measure(
            corruption, clean_set, list(image_ids[sel]), {k: v[sel] for k, v in params.items()},
            seeds[sel], vif_settings=vif_settings, device=device,
        )[2]  # fmt: skip
    return out


def corrupt_stored(
    corruption: Corruption,
    stored: np.ndarray,
    params: Mapping[str, float],
    seed: int,
    view: tuple[int, int],
    vif_settings: VifSettings = _DEFAULT,
    within: str = "domain",
) -> tuple[np.ndarray, float, float]:
    """The VCR authors' pipeline for one image (``dataset.resolution: stored``): corrupt the image
    at its stored resolution (``stored``, uint8 (H, W, 3),
    :func:`vcrbench.datasets.imagefiles.bounded_size`), measure VIF and Δv on that pair, then resize
    and centre-crop the corrupted image as the models see it
    (:func:`vcrbench.datasets.imagefiles.resize_center_crop` with ``view``, ``(resize, crop)``:
    ``CleanSet.view``, the clean set's). Returns ``(the model's view, VIF, Δv)``.
    """
    from vcrbench.datasets.imagefiles import resize_center_crop

    corrupted = corruption.apply(stored, dict(params), int(seed), within=within)
    vif, dv = visual_change(stored[None], corrupted[None], vif_settings)
    return resize_center_crop(corrupted, *view), float(vif[0]), float(dv[0])


def corrupt_and_measure(
    corruption: Corruption,
    clean_set,
    image_ids: Sequence[str],
    params: Mapping[str, Sequence[float]],
    seeds: Sequence[int],
    within: str = "domain",
    vif_settings: VifSettings = _DEFAULT,
    device=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Corrupt the images ``image_ids`` of ``clean_set`` and measure Δv as ``vif_settings`` says,
    where the clean set says: on its crops (today's pipeline), or with stored images
    (``clean_set.stored``) at their stored resolution, shown as crops (:func:`corrupt_stored`).
    Returns ``(the corrupted images the models see, uint8 (N, crop, crop, 3), VIF, Δv)``."""
    if not getattr(clean_set, "stored", False):
        clean = clean_set.images(list(image_ids))
        corrupted = corrupt_batch(corruption, clean, params, seeds, within)
        vif, dv = visual_change(clean, corrupted, vif_settings, device)
        return corrupted, vif, dv
    out, vif, dv = [], np.empty(len(image_ids)), np.empty(len(image_ids))
    for i, image_id in enumerate(image_ids):
        p = {k: float(v[i]) for k, v in params.items()}
        shown, vif[i], dv[i] = corrupt_stored(
            corruption, clean_set.stored_image(image_id), p, int(seeds[i]), clean_set.view,
            vif_settings, within=within,
        )  # fmt: skip
        out.append(shown)
    return np.stack(out), vif, dv


def pipeline_of(clean_set, vif_settings: VifSettings) -> dict:
    """What a set's metadata says of its pipeline where it is not the schema's default:
    ``resolution`` (``stored``) and ``grey`` (``uint8``, :meth:`VifSettings.metadata`); ``{}`` for
    the crop and float grey, so that the default run's files stay as they were."""
    out = {"resolution": "stored"} if getattr(clean_set, "stored", False) else {}
    return {**out, **vif_settings.metadata()}
