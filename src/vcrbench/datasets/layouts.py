"""Readers for the layouts that datasets with their own classes are distributed in.

Each reader returns the dataset table of :mod:`vcrbench.datasets.loading`
(``image_id, path, label``), ``label`` an index into the dataset's classes in the order of its class
list:

- ``cub200`` — Caltech-UCSD Birds-200-2011 (Wah et al. 2011): ``images.txt`` (``<id> <path>``),
  ``image_class_labels.txt`` (``<id> <class id>``), ``train_test_split.txt``
  (``<id> <is_training>``), ``classes.txt`` (``<class id> <name>``), images under ``images/``.
  ``split`` keeps all images, the training or the test images of ``train_test_split.txt``.
- ``awa2`` — Animals with Attributes 2 (Xian et al. 2019): ``JPEG Images/<class>/*.jpg`` and
  ``classes.txt`` (``<k> <name>``).
- ``sun`` — the SUN attribute images (Patterson and Hays 2012): class folders, optionally under
  ``images/``, grouped by first letter (``a/abbey/…``), some two deep
  (``a/apartment_building/outdoor/…``). A class is its folder path without the letter folder,
  joined by ``_`` (``apartment_building_outdoor``); the class order is the label space's class
  names, or the sorted folder names when it has none.

:func:`read_zero_shot_split` reads the class lists that define seen and unseen classes (Xian et
al. 2019, "Zero-shot learning — a comprehensive evaluation of the good, the bad and the ugly",
the "proposed splits": ``trainvalclasses.txt`` = seen, ``testclasses.txt`` = unseen).

Every malformed line raises :class:`~vcrbench.errors.DatasetError` naming the file and line. The
three kinds are registered here (:mod:`vcrbench.datasets.kinds`), each with the classes its tree
defines.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from vcrbench.datasets.kinds import (
    DatasetKind,
    DatasetRequest,
    get_dataset_kind,
    layout_kinds,
    no_split,
    register_dataset_kind,
)
from vcrbench.errors import DatasetError, LabelSpaceError
from vcrbench.labels import read_class_names
from vcrbench.vocab import IMAGE_SUFFIXES

#: ``dataset.split`` values (CUB-200-2011's ``train_test_split.txt``).
SPLITS = ("all", "train", "test")


def dataset_frame(rows: list[tuple[str, str, int]]) -> pd.DataFrame:
    """The dataset table of ``(image_id, path, label)`` rows, sorted by image id."""
    df = pd.DataFrame(rows, columns=["image_id", "path", "label"])
    df["label"] = df["label"].astype("int64")
    return df.sort_values("image_id", kind="stable").reset_index(drop=True)


def _require_dir(root: str | os.PathLike, what: str) -> Path:
    root = Path(root)
    if not root.is_dir():
        raise DatasetError(f"{what} folder {root} does not exist")
    return root


def _class_file(path: Path) -> list[str]:
    try:
        return read_class_names(path, where=str(path))
    except LabelSpaceError as exc:
        raise DatasetError(str(exc)) from None


def _id_table(path: Path, n_fields: int = 2) -> dict[int, str]:
    """``<int id> <value>`` per line (the CUB-200-2011 metadata files), ids unique."""
    if not path.is_file():
        raise DatasetError(f"{path} does not exist (a CUB-200-2011 layout needs it)")
    out: dict[int, str] = {}
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split(maxsplit=n_fields - 1)
        if len(parts) != n_fields or not parts[0].isdigit():
            raise DatasetError(f"{path}:{lineno}: expected '<image id> <value>', got {line!r}")
        key = int(parts[0])
        if key in out:
            raise DatasetError(f"{path}:{lineno}: image id {key} is listed twice")
        out[key] = parts[1].strip()
    if not out:
        raise DatasetError(f"{path} lists no image")
    return out


def cub_classes(root: str | os.PathLike) -> list[str]:
    """The 200 class names of a CUB-200-2011 tree, in class-id order (``classes.txt``)."""
    return _class_file(_require_dir(root, "CUB-200-2011") / "classes.txt")


def read_cub(root: str | os.PathLike, split: str) -> pd.DataFrame:
    """A CUB-200-2011 tree (module docstring); ``image_id`` is the path under ``images/``;
    ``split`` (``dataset.split``): ``all``, or its ``train`` or ``test`` images."""
    if split not in SPLITS:
        raise DatasetError(f"dataset.split {split!r} is not one of {SPLITS}")
    root = _require_dir(root, "CUB-200-2011")
    n_classes = len(cub_classes(root))
    images = _id_table(root / "images.txt")
    labels = _id_table(root / "image_class_labels.txt")
    training = _id_table(root / "train_test_split.txt")
    for name, table in (("image_class_labels.txt", labels), ("train_test_split.txt", training)):
        missing = sorted(set(images) - set(table))
        if missing:
            raise DatasetError(f"{root / name}: no line for image id {missing[0]} of images.txt")
    rows = []
    for key, rel in images.items():
        label = labels[key]
        if not label.isdigit() or not 1 <= int(label) <= n_classes:
            raise DatasetError(
                f"{root / 'image_class_labels.txt'}: image id {key} has class {label!r}, not one "
                f"of 1..{n_classes} of classes.txt"
            )
        if training[key] not in ("0", "1"):
            raise DatasetError(
                f"{root / 'train_test_split.txt'}: image id {key} has {training[key]!r}, not 0 or 1"
            )
        if split == "train" and training[key] != "1" or split == "test" and training[key] != "0":
            continue
        path = root / "images" / rel
        if not path.is_file():
            raise DatasetError(
                f"image {path} is listed in {root / 'images.txt'} but does not exist"
            )
        rows.append((Path(rel).as_posix(), str(path), int(label) - 1))
    if not rows:
        raise DatasetError(f"CUB-200-2011 tree {root}: no image in split {split!r}")
    return dataset_frame(rows)


def awa2_classes(root: str | os.PathLike) -> list[str]:
    """The class names of an AwA2 tree, in class order (``classes.txt``)."""
    return _class_file(_require_dir(root, "AwA2") / "classes.txt")


def read_awa2(root: str | os.PathLike) -> pd.DataFrame:
    """An AwA2 tree: ``JPEG Images/<class>/`` per class of ``classes.txt``."""
    root = _require_dir(root, "AwA2")
    classes = awa2_classes(root)
    index = {name: i for i, name in enumerate(classes)}
    images = root / "JPEG Images"
    if not images.is_dir():
        raise DatasetError(f"AwA2 tree {root}: folder 'JPEG Images' does not exist")
    rows = []
    for sub in sorted(p for p in images.iterdir() if p.is_dir()):
        if sub.name not in index:
            raise DatasetError(f"AwA2 class folder {sub} is not a class of {root / 'classes.txt'}")
        for path in sorted(sub.iterdir()):
            if path.suffix.lower() in IMAGE_SUFFIXES:
                rows.append((f"{sub.name}/{path.name}", str(path), index[sub.name]))
    if not rows:
        raise DatasetError(f"no images found under {images}")
    return dataset_frame(rows)


def _sun_root(root: Path) -> Path:
    return root / "images" if (root / "images").is_dir() else root


def _sun_class(rel: Path) -> str:
    parts = rel.parts
    if len(parts) > 1 and len(parts[0]) == 1:
        parts = parts[1:]  # the first-letter folder
    return "_".join(parts)


def sun_folders(root: str | os.PathLike) -> dict[str, list[Path]]:
    """``{class: [image files]}`` of a SUN tree (module docstring), classes sorted."""
    base = _sun_root(_require_dir(root, "SUN"))
    found: dict[str, list[Path]] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        files = sorted(f for f in filenames if Path(f).suffix.lower() in IMAGE_SUFFIXES)
        if files and Path(dirpath) != base:
            name = _sun_class(Path(dirpath).relative_to(base))
            if name in found:
                raise DatasetError(f"SUN tree {root}: two folders are class {name!r}")
            found[name] = [Path(dirpath) / f for f in files]
    if not found:
        raise DatasetError(f"no class folder with images found in SUN tree {base}")
    return dict(sorted(found.items()))


def sun_classes(root: str | os.PathLike) -> list[str]:
    return list(sun_folders(root))


def read_sun(root: str | os.PathLike, class_names: Sequence[str] | None = None) -> pd.DataFrame:
    """A SUN tree; labels index ``class_names`` (default: the sorted class folders)."""
    folders = sun_folders(root)
    names = list(class_names) if class_names is not None else list(folders)
    index = {name: i for i, name in enumerate(names)}
    base = _sun_root(Path(root))
    rows = []
    for name, files in folders.items():
        if name not in index:
            raise DatasetError(
                f"SUN class folder {name!r} (under {base}) is not one of the label space's classes"
            )
        rows += [(p.relative_to(base).as_posix(), str(p), index[name]) for p in files]
    return dataset_frame(rows)


# --------------------------------------------------------------------------- the kinds read here


@register_dataset_kind(
    "cub200",
    needs_path="folder",
    classes=cub_classes,
    splits=True,
    description="Caltech-UCSD Birds-200-2011 as it ships (images.txt, classes.txt, …)",
)
def _read_cub_kind(request: DatasetRequest) -> pd.DataFrame:
    return read_cub(request.path, request.split)


@register_dataset_kind(
    "awa2",
    needs_path="folder",
    classes=awa2_classes,
    description="Animals with Attributes 2 as it ships (JPEG Images/<class>/, classes.txt)",
)
def _read_awa2_kind(request: DatasetRequest) -> pd.DataFrame:
    return read_awa2(request.path)


@register_dataset_kind(
    "sun",
    needs_path="folder",
    classes=sun_classes,
    ordered_by_label_space=True,
    description="the SUN attribute images in their letter and class folders",
)
def _read_sun_kind(request: DatasetRequest) -> pd.DataFrame:
    return read_sun(request.path, request.class_names)


def _layout(kind: str) -> DatasetKind:
    """The registered kind ``kind``, one whose tree defines its classes."""
    layout = get_dataset_kind(kind)
    if layout.classes is None:
        raise DatasetError(f"dataset.kind {kind!r} is not one of {tuple(layout_kinds())}")
    return layout


def layout_classes(kind: str, root: str | os.PathLike) -> list[str]:
    """The classes a layout's tree defines, in label order (config validation compares them
    with ``dataset.label_space``)."""
    return _layout(kind).classes(str(root))


def read_layout(
    kind: str,
    root: str | os.PathLike,
    *,
    class_names: Sequence[str] | None = None,
    split: str,
) -> pd.DataFrame:
    """The tree of a layout kind (one whose tree defines its classes: ``layout_kinds``);
    ``split`` as ``dataset.split``."""
    layout = _layout(kind)
    if split != "all" and not layout.splits:
        raise DatasetError(f"dataset.split {split!r}: {no_split(kind)}")
    return layout.read(DatasetRequest(str(root), class_names=class_names, split=split))


# --------------------------------------------------------------------------- zero-shot splits


def _split_names(source: str | os.PathLike | Sequence[str], what: str) -> list[tuple[str, str]]:
    """``(where, name)`` of each class of a split given as a file or a list."""
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        try:
            names = read_class_names(path, where=f"zero-shot {what} classes")
        except LabelSpaceError as exc:
            raise DatasetError(str(exc)) from None
        lines = [i for i, line in enumerate(path.read_text().splitlines(), 1) if line.strip()]
        return [(f"{path}:{i}", n) for i, n in zip(lines, names, strict=True)]
    return [(f"{what}[{i}]", str(n)) for i, n in enumerate(source)]


def read_zero_shot_split(
    seen: str | os.PathLike | Sequence[str],
    unseen: str | os.PathLike | Sequence[str],
    class_names: Sequence[str],
) -> tuple[list[int], list[int]]:
    """Indices (into ``class_names``) of the seen and the unseen classes.

    ``seen``/``unseen`` are class-list files (Xian et al.'s ``trainvalclasses.txt`` and
    ``testclasses.txt``) or lists of names. A name that is not a class, or a class in both,
    raises :class:`DatasetError` naming the file and line.
    """
    index = {name: i for i, name in enumerate(class_names)}
    out: dict[str, list[int]] = {}
    where_of: dict[int, str] = {}
    for what, source in (("seen", seen), ("unseen", unseen)):
        ids = []
        for where, name in _split_names(source, what):
            if name not in index:
                raise DatasetError(
                    f"{where}: {what} class {name!r} is not a class of the label space"
                )
            k = index[name]
            if k in where_of:
                raise DatasetError(
                    f"{where}: class {name!r} is already a class of {where_of[k]} (seen and "
                    "unseen classes are disjoint)"
                )
            where_of[k] = where
            ids.append(k)
        if not ids:
            raise DatasetError(f"zero-shot split: no {what} class")
        out[what] = sorted(ids)
    return out["seen"], out["unseen"]
