"""A dataset's listing: a ``file,label`` CSV and the files it names (the ``folder`` dataset, and
``imagenet-val`` with a labels file), read with every defect of its rows found at once.

A defect of a row (an empty field, a label that is neither a class index nor an ImageNet-1k
WordNet ID, a negative label, a file listed twice, a listed file that does not exist) raises
:class:`~vcrbench.errors.DatasetError` naming the file and line, or, given a ``problems`` list,
is appended to it as ``(where, what is wrong)`` and the row left out, so that the dataset check
(``check_images``) names every defect of a dataset in one run. A file that cannot be a labels
file at all (missing, no header, no rows) always raises.

The dataset kinds ``folder`` and ``imagenet-val`` are registered here, beside their readers
(:mod:`vcrbench.datasets.kinds`).
"""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path

import pandas as pd

from vcrbench.datasets.kinds import DatasetRequest, register_dataset_kind
from vcrbench.datasets.layouts import dataset_frame
from vcrbench.errors import DatasetError
from vcrbench.labels import imagenet_val_labels, imagenet_wnid_index
from vcrbench.vocab import IMAGE_SUFFIXES, UNLABELLED

WNID_RE = re.compile(r"^n\d{8}$")

#: ``(where, what is wrong)``: a defect of a dataset's listing or of one of its files.
Problem = tuple[str, str]


def _defect(problems: list[Problem] | None, where: str, what: str) -> None:
    """Raise the defect (``problems`` None) or record it."""
    if problems is None:
        raise DatasetError(f"{where}: {what}")
    problems.append((where, what))


def parse_label(value: str, wnid_index: dict[str, int] | None = None) -> int:
    """The class index of a label cell: an integer, or an ImageNet-1k WordNet ID; ValueError
    saying what is wrong with it otherwise."""
    value = value.strip()
    if WNID_RE.match(value):
        wnid_index = wnid_index if wnid_index is not None else imagenet_wnid_index()
        if value not in wnid_index:
            raise ValueError(f"WordNet ID {value!r} is not an ImageNet-1k class")
        return wnid_index[value]
    try:
        label = int(value)
    except ValueError:
        raise ValueError(
            f"label {value!r} is neither an integer class index nor a WordNet ID"
        ) from None
    if label < UNLABELLED:
        raise ValueError(f"label {label} is negative (use {UNLABELLED} for no label)")
    return label


def read_labels_file(
    labels_file: str | os.PathLike, problems: list[Problem] | None = None
) -> dict[str, int]:
    """Read a CSV labels file with a header ``file,label``; returns ``{file: class index}`` (the
    rows without defect; see the module docstring for ``problems``)."""
    labels_file = Path(labels_file)
    if not labels_file.is_file():
        raise DatasetError(f"labels file {labels_file} does not exist")
    wnids = None
    out: dict[str, int] = {}
    with labels_file.open(newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames is None or not {"file", "label"} <= set(reader.fieldnames):
            raise DatasetError(
                f"labels file {labels_file} needs a header with columns 'file' and 'label', "
                f"found {reader.fieldnames}"
            )
        for lineno, row in enumerate(reader, start=2):
            where = f"{labels_file}:{lineno}"
            if not row["file"] or not (row["label"] or "").strip():
                _defect(problems, where, "empty 'file' or 'label'")
                continue
            if row["file"] in out:
                _defect(problems, where, f"file {row['file']!r} is listed twice")
                continue
            if wnids is None and WNID_RE.match(row["label"].strip()):
                wnids = imagenet_wnid_index()
            try:
                out[row["file"]] = parse_label(row["label"], wnids)
            except ValueError as exc:
                _defect(problems, where, str(exc))
    if not out and not problems:
        raise DatasetError(f"labels file {labels_file} lists no images")
    return out


def read_folder_dataset(
    root: str | os.PathLike, labels_file: str | os.PathLike, problems: list[Problem] | None = None
) -> pd.DataFrame:
    """A folder of images with a ``file,label`` CSV (``problems``: see the module docstring)."""
    root = Path(root)
    if not root.is_dir():
        raise DatasetError(f"dataset folder {root} does not exist")
    labels = read_labels_file(labels_file, problems)
    rows = []
    for file, label in labels.items():
        path = root / file
        if not path.is_file():
            _defect(problems, str(path), f"listed in {labels_file} but does not exist")
            continue
        rows.append((Path(file).as_posix(), str(path), label))
    return dataset_frame(rows)


def read_imagenet_val(
    root: str | os.PathLike, labels_file: str | os.PathLike | None = None, problems=None
) -> pd.DataFrame:
    """ILSVRC2012 validation images, flat or in WordNet-ID class folders (``problems``: the
    defects of a labels file's rows, as above)."""
    root = Path(root)
    if not root.is_dir():
        raise DatasetError(f"ImageNet validation folder {root} does not exist")
    if labels_file is not None:
        return read_folder_dataset(root, labels_file, problems)
    subdirs = sorted(p for p in root.iterdir() if p.is_dir() and WNID_RE.match(p.name))
    rows = []
    if subdirs:
        index = imagenet_wnid_index()
        for sub in subdirs:
            if sub.name not in index:
                raise DatasetError(f"class folder {sub} is not an ImageNet-1k WordNet ID")
            for path in sorted(sub.iterdir()):
                if path.suffix.lower() in IMAGE_SUFFIXES:
                    rows.append((f"{sub.name}/{path.name}", str(path), index[sub.name]))
    else:
        known = imagenet_val_labels()
        for path in sorted(root.iterdir()):
            if path.suffix.lower() not in IMAGE_SUFFIXES:
                continue
            if path.name not in known:
                raise DatasetError(
                    f"{path} is not an ILSVRC2012 validation file name; give a labels file "
                    "(dataset.labels) for other images"
                )
            rows.append((path.name, str(path), known[path.name]))
    if not rows:
        raise DatasetError(f"no images found in ImageNet validation folder {root}")
    return dataset_frame(rows)


# --------------------------------------------------------------------------- the kinds read here


@register_dataset_kind(
    "folder",
    needs_path="folder",
    needs_labels=True,
    pool=True,
    description="any folder of images plus a labels CSV (file,label)",
)
def _read_folder_kind(request: DatasetRequest) -> pd.DataFrame:
    return read_folder_dataset(request.path, request.labels, request.problems)


@register_dataset_kind(
    "imagenet-val",
    needs_path="folder",
    pool=True,
    description="the ILSVRC2012 validation layout, flat or in WordNet-ID class folders",
)
def _read_imagenet_val_kind(request: DatasetRequest) -> pd.DataFrame:
    return read_imagenet_val(request.path, request.labels, request.problems)
