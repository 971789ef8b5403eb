"""The retraining pool: the images the training set is generated from, disjoint from evaluation.

:func:`prepare_pool` reads the pool's dataset (any ``dataset`` kind), keeps the images it selects
and that have a label (cross-entropy needs one), and prepares them exactly as the evaluation clean
set (resize, centre crop). :func:`check_disjoint` then compares the two prepared sets pixel for
pixel, through a hash of each image's decoded uint8 array: an image of the evaluation set that is
also in the pool, under whatever file name, path or format, stops the workflow with an error that
names both ids. (A re-encoded or rescaled copy has other pixels and is not caught; the check is for
exact copies, the common way pools and test sets overlap.)
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Mapping

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from vcrbench.datasets import loading
from vcrbench.errors import PoolOverlapError
from vcrbench.files import io
from vcrbench.settings import DatasetSettings
from vcrbench.vocab import UNLABELLED

log = logging.getLogger(__name__)

#: Images hashed per read of the memory-mapped clean set (bounds memory at ~ 40 MB for 224²).
HASH_CHUNK = 256


def prepare_pool(
    pool: Mapping,
    images_path: str | os.PathLike,
    index_path: str | os.PathLike,
    threads: int = 1,
) -> pd.DataFrame:
    """Prepare the pool's clean set from ``pool`` (:func:`vcrbench.retrain.pool_settings`).

    Keys: ``kind, path, labels`` (as ``dataset``), ``include, exclude`` (image ids),
    ``n_images`` (a seeded random subset of the labelled images, drawn with ``seed``),
    ``resize, crop, on_error`` (the pool's :class:`~vcrbench.settings.DatasetSettings`; the
    other keys of the ``dataset`` block, ``exif_transpose`` among them, are the schema's).
    Unlabelled images are left out. Returns the index.
    """
    settings = DatasetSettings(
        kind=pool["kind"], path=pool.get("path"), labels=pool.get("labels"),
        resize=int(pool["resize"]), crop=int(pool["crop"]), on_error=pool["on_error"],
    )  # fmt: skip
    table = loading.load_dataset(settings)
    try:
        chosen = loading.select_images(table, pool.get("include"), pool.get("exclude"))
    except loading.DatasetError as exc:
        raise loading.DatasetError(f"retrain.pool.{exc}") from None
    labelled = loading.select_images(
        chosen, labelled_only=True, n_images=pool.get("n_images"), seed=int(pool["seed"])
    )
    unlabelled = int((chosen["label"] == UNLABELLED).sum())
    if unlabelled:
        log.info("leaving out %d unlabelled pool image(s): cross-entropy needs labels", unlabelled)
    if labelled.empty:
        raise loading.DatasetError(
            f"the retraining pool (retrain.pool, kind {pool['kind']!r}) holds no labelled image "
            f"({len(chosen)} selected, all unlabelled): fine-tuning needs labels"
        )
    log.info("retraining pool: %d labelled images", len(labelled))
    return loading.prepare_clean_set(labelled, images_path, index_path, settings, threads)


def image_digests(clean_set: loading.CleanSet, desc: str = "hashing") -> list[str]:
    """BLAKE2b digest of each image's decoded pixels (shape and uint8 bytes), in index order."""
    array = np.load(clean_set.images_path, mmap_mode="r")
    rows = clean_set.index["row"].to_numpy()
    out: list[str] = []
    for start in tqdm(
        range(0, len(rows), HASH_CHUNK), desc=desc, unit="chunk", mininterval=2.0, disable=None
    ):
        block = np.asarray(array[rows[start : start + HASH_CHUNK]])
        for image in block:
            h = hashlib.blake2b(digest_size=16)
            h.update(repr(image.shape).encode())
            h.update(np.ascontiguousarray(image).tobytes())
            out.append(h.hexdigest())
    return out


def find_overlap(pool: loading.CleanSet, evaluation: loading.CleanSet) -> pd.DataFrame:
    """Pairs ``(pool_image_id, evaluation_image_id, digest)`` of images with identical pixels."""
    eval_digests = pd.DataFrame(
        {
            "evaluation_image_id": evaluation.image_ids,
            "digest": image_digests(evaluation, "hashing evaluation images"),
        }
    )
    pool_digests = pd.DataFrame(
        {"pool_image_id": pool.image_ids, "digest": image_digests(pool, "hashing pool images")}
    )
    pairs = pool_digests.merge(eval_digests, on="digest", how="inner")
    return pairs[["pool_image_id", "evaluation_image_id", "digest"]].sort_values(
        ["pool_image_id", "evaluation_image_id"], ignore_index=True
    )


def check_disjoint(
    pool_images: str | os.PathLike,
    pool_index: str | os.PathLike,
    evaluation_images: str | os.PathLike,
    evaluation_index: str | os.PathLike,
    out_path: str | os.PathLike,
) -> dict:
    """Check that no pool image is an evaluation image; write a JSON record of the check.

    Raises :class:`PoolOverlapError` naming every overlapping pair (pool id = evaluation id) and
    writes nothing in that case. Images prepared at different sizes cannot be compared: that is
    an error too (the workflow prepares the pool with the evaluation set's resize and crop).
    """
    pool = loading.CleanSet.open(pool_images, pool_index)
    evaluation = loading.CleanSet.open(evaluation_images, evaluation_index)
    shapes = {
        "pool": np.load(pool.images_path, mmap_mode="r").shape[1:],
        "evaluation": np.load(evaluation.images_path, mmap_mode="r").shape[1:],
    }
    if shapes["pool"] != shapes["evaluation"]:
        raise PoolOverlapError(
            f"the retraining pool {pool_images} holds images of shape {shapes['pool']}, the "
            f"evaluation set {evaluation_images} {shapes['evaluation']}: prepare both with the "
            "same resize and crop so that they can be compared"
        )
    pairs = find_overlap(pool, evaluation)
    if not pairs.empty:
        listed = "; ".join(
            f"{p} = {e}" for p, e in pairs[["pool_image_id", "evaluation_image_id"]].head(20).values
        )
        more = f" (and {len(pairs) - 20} more)" if len(pairs) > 20 else ""
        raise PoolOverlapError(
            f"{len(pairs)} image(s) of the retraining pool are evaluation images (identical "
            f"pixels; pool id = evaluation id): {listed}{more}. Remove them from the pool "
            "(retrain.pool.exclude) or choose a separate pool, so that the fine-tuned model "
            "is never evaluated on images it was trained on"
        )
    record = {
        "check": "blake2b-128 of decoded uint8 pixels",
        "pool_images": len(pool),
        "evaluation_images": len(evaluation),
        "image_shape": list(shapes["pool"]),
        "overlap": 0,
    }
    io.write_json(record, out_path)
    log.info("pool (%d images) and evaluation set (%d) share no image", len(pool), len(evaluation))
    return record
