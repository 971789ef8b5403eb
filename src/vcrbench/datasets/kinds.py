"""The dataset kinds by name (``dataset.kind``, ``retrain.pool.kind``): a leaf registry.

A kind is registered once, with :func:`register_dataset_kind`, together with everything the
project knows about it: its reader (``read(request) -> table`` of ``image_id, path, label``), what
its config block needs (a ``path`` that is a folder or a file, a ``labels`` file), the classes its
own tree defines (a layout such as CUB-200-2011's, compared with ``dataset.label_space`` before
any job), whether it ships a train/test split (``dataset.split``), whether it can be the
retraining pool, the image ids the plan can count from its listing without opening a folder, and
any check of its own before a run. Config validation (:mod:`vcrbench.plan.checks`,
:mod:`vcrbench.plan.retrain`), the plan's clean-set size (:mod:`vcrbench.plan.config`) and
:func:`vcrbench.datasets.loading.load_dataset` read the registration; nothing else names a kind.

The built-in kinds register themselves in :mod:`vcrbench.datasets.loading` (``embedded``,
``folder``, ``imagenet-val``) and :mod:`vcrbench.datasets.layouts` (``cub200``, ``awa2``, ``sun``);
import :mod:`vcrbench.datasets.loading` to have them all. docs/architecture.md, "Add a dataset
kind", is the recipe.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vcrbench.errors import DatasetError, did_you_mean

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class DatasetRequest:
    """What a reader is asked for: the config block's ``path`` and ``labels``, the label space's
    class names (None: it has none), ``split`` (``all`` unless the kind ships a split) and
    ``problems`` (a list that collects a listing's defects instead of stopping at the first, or
    None; :mod:`vcrbench.datasets.listing`)."""

    path: str | None = None
    labels: str | None = None
    class_names: Sequence[str] | None = None
    split: str = "all"
    problems: list | None = None


#: ``read(request) -> DataFrame[image_id, path, label]`` (sorted by image id:
#: :func:`vcrbench.datasets.layouts.dataset_frame`); a defect raises :class:`DatasetError` naming
#: it.
Reader = Callable[[DatasetRequest], "pd.DataFrame"]
#: ``classes(path) -> class names`` in label order, read from the kind's own tree.
ClassReader = Callable[[str], list[str]]
#: ``listing(block) -> image ids or None``: the images a config block selects, from the config and
#: the files it names alone (no folder listed, no image opened); None: not known before reading.
Listing = Callable[[Mapping[str, Any]], "list[str] | None"]
#: ``check(block) -> [(key of the block, what is wrong)]``: the kind's own checks before any job,
#: beyond the ``path`` and ``labels`` it needs (those are checked for it).
KindCheck = Callable[[Mapping[str, Any]], list[tuple[str, str]]]

#: What ``path`` must be, where a kind needs one.
PATH_FORMS = ("folder", "file")


@dataclass(frozen=True)
class DatasetKind:
    """A registered dataset kind: everything the project knows about it."""

    name: str
    read: Reader
    #: ``"folder"`` or ``"file"``: ``path`` is required and must be one; None: no path is read.
    needs_path: str | None = None
    #: Whether ``labels`` (a ``file,label`` CSV) is required; a given labels file must exist always.
    needs_labels: bool = False
    #: The classes the kind's own tree defines (a layout); None: its labels are in the configured
    #: label space (ImageNet-1k by default), and it needs no label space of its own.
    classes: ClassReader | None = None
    #: With ``classes``: the label space's class names give the class order, and the tree's
    #: classes need only be among them (SUN); False: the tree's classes are the label space's, in
    #: order.
    ordered_by_label_space: bool = False
    #: Whether it ships a train/test split (``dataset.split`` other than ``all``).
    splits: bool = False
    #: Whether it can be the retraining pool (``retrain.pool.kind``; ImageNet-1k labels).
    pool: bool = False
    listing: Listing | None = None
    check: KindCheck | None = None
    #: One line for users (what it reads).
    description: str = ""

    def needs(self, block: Mapping[str, Any], where: str) -> list[tuple[str, str]]:
        """What is wrong with config block ``block`` (``where``: its key, ``dataset`` or
        ``retrain.pool``) for this kind: ``[(key of the block, problem)]``, the first of ``path``
        and ``labels`` (the rest would follow from it), then the kind's own check."""
        out: list[tuple[str, str]] = []
        path = block.get("path")
        if self.needs_path is not None:
            if not path:
                out.append(("path", f"required for {where}.kind {self.name!r}"))
            elif not (Path(path).is_dir() if self.needs_path == "folder" else Path(path).is_file()):
                out.append(("path", f"{self.needs_path} {path} does not exist"))
        labels = block.get("labels")
        if self.needs_labels and not labels:
            out.append(("labels", f"required for {where}.kind {self.name!r}"))
        elif labels and not Path(labels).is_file():
            out.append(("labels", f"file {labels} does not exist"))
        if out:
            return out[:1]
        return list(self.check(block)) if self.check is not None else []


#: The registered kinds by name (the built-ins: import :mod:`vcrbench.datasets.loading`); messages
#: list them sorted, whatever order the modules registered them in.
DATASET_KINDS: dict[str, DatasetKind] = {}


def register_dataset_kind(
    name: str,
    *,
    needs_path: str | None = None,
    needs_labels: bool = False,
    classes: ClassReader | None = None,
    ordered_by_label_space: bool = False,
    splits: bool = False,
    pool: bool = False,
    listing: Listing | None = None,
    check: KindCheck | None = None,
    description: str = "",
) -> Callable[[Reader], Reader]:
    """Decorator: register ``read(request) -> table`` as the dataset kind ``name``, with what its
    config block needs and what it has (see :class:`DatasetKind`)."""
    if needs_path not in (None, *PATH_FORMS):
        raise DatasetError(f"dataset kind {name!r}: needs_path must be one of {PATH_FORMS} or None")
    if ordered_by_label_space and classes is None:
        raise DatasetError(f"dataset kind {name!r}: ordered_by_label_space needs classes")

    def deco(fn: Reader) -> Reader:
        if name in DATASET_KINDS:
            raise DatasetError(f"dataset kind {name!r} is already registered")
        DATASET_KINDS[name] = DatasetKind(
            name, fn, needs_path, needs_labels, classes, ordered_by_label_space, splits, pool, listing, check,
            description,
        )  # fmt: skip
        return fn

    return deco


def unregister_dataset_kind(name: str) -> None:
    """Remove the kind ``name`` (a test's own kind, after the test)."""
    if name not in DATASET_KINDS:
        raise DatasetError(f"dataset kind {name!r} is not registered")
    del DATASET_KINDS[name]


def unknown_kind(name: object, known: Sequence[str] | None = None) -> str:
    """``unknown dataset kind 'x' (did you mean …); known: …`` (``known``: the registered
    kinds, or those of them that fit where it is asked)."""
    known = sorted(DATASET_KINDS) if known is None else list(known)
    hint = did_you_mean(str(name), known)
    return f"unknown dataset kind {name!r}{hint}; known: {', '.join(known)}"


def get_dataset_kind(name: str) -> DatasetKind:
    """The registered kind ``name``; the error lists the known ones."""
    if name not in DATASET_KINDS:
        raise DatasetError(unknown_kind(name))
    return DATASET_KINDS[name]


def split_kinds() -> list[str]:
    """The kinds that ship a train/test split, sorted."""
    return sorted(name for name, kind in DATASET_KINDS.items() if kind.splits)


def layout_kinds() -> list[str]:
    """The kinds whose trees define their classes (layouts), sorted."""
    return sorted(name for name, kind in DATASET_KINDS.items() if kind.classes is not None)


def no_split(kind: str) -> str:
    """``only cub200 ships a train/test split, not dataset.kind 'x'``: a split asked of a kind
    that has none."""
    names = split_kinds()
    if not names:
        return "no registered dataset kind ships a train/test split"
    ships = f"{' and '.join(names)} {'ships' if len(names) == 1 else 'ship'}"
    return f"only {ships} a train/test split, not dataset.kind {kind!r}"


def pool_kinds() -> list[str]:
    """The kinds that can be the retraining pool, sorted."""
    return sorted(name for name, kind in DATASET_KINDS.items() if kind.pool)
