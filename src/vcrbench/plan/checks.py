"""The checks a schema cannot make: names against the library's registries (corruptions, model
sources, label spaces, human references), paths that must exist, and how blocks fit together.
Each raises :class:`~vcrbench.errors.ConfigError` whose message starts with the key at fault,
before any job starts; :func:`check` runs them all and names every problem at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from vcrbench.datasets.kinds import DatasetKind, split_kinds
from vcrbench.datasets.layouts import read_zero_shot_split
from vcrbench.errors import (
    ConfigError,
    ConfigErrors,
    DatasetError,
    LabelSpaceError,
    did_you_mean,
    raise_all,
)
from vcrbench.figures.options import check_options
from vcrbench.labels import LabelSpace, check_compatible, get_label_space
from vcrbench.plan import humans, paths, retrain
from vcrbench.plan.config import fetched_checkpoint, model_entries, model_settings
from vcrbench.plan.dataset_kind import dataset_kind


def check(config: Mapping, schema_failed: bool = False) -> None:
    """Every semantic check of a validated config (see the module docstring), each block's on its
    own: :class:`~vcrbench.errors.ConfigErrors` names every key at fault at once.

    ``schema_failed``: the schema named problems already. Once a problem is named, a later
    block's check that trips over it (a value of the wrong type, a corruption the registry does
    not know: an error other than ``ConfigError``) is left out, not raised.
    """
    problems: list[str] = []
    checks = (
        _check_dataset, _check_corruptions, retrain.check, _check_models, humans.check,
        _check_anchor1,
    )  # fmt: skip
    for block_check in (*checks, lambda c: check_options(c["figures"])):
        problems += _problems_of(block_check, config, schema_failed or bool(problems))
    raise_all(problems)


def _problems_of(block_check, config: Mapping, schema_failed: bool) -> list[str]:
    """The messages of the ConfigError(s) that ``block_check(config)`` raises, [] if none."""
    try:
        block_check(config)
    except ConfigErrors as exc:
        return exc.problems
    except ConfigError as exc:
        return [str(exc)]
    except (TypeError, KeyError, AttributeError, ValueError):
        if not schema_failed:
            raise
    return []


def _check_anchor1(config: Mapping) -> None:
    """``estimation.anchor1: chance`` needs a label space whose number of classes the estimator
    knows (ImageNet-1k; the 16 classes always)."""
    from vcrbench.estimation.estimate import ANCHOR1_CHANCE, CHANCE_CLASSES

    if config["estimation"].get("anchor1") != ANCHOR1_CHANCE:
        return
    space = dataset_label_space(config["dataset"]).name
    if space not in CHANCE_CLASSES:
        raise ConfigError(
            "config key 'estimation.anchor1': chance is known for "
            f"{sorted(CHANCE_CLASSES)}, not for the dataset's label space {space!r}; give a number"
        )


def _check_dataset(config: Mapping) -> None:
    """The ``dataset`` block: its kind registered, what the kind needs (``path``, ``labels``, its
    own check: :mod:`vcrbench.datasets.kinds`), the crop, a tree's classes against the label
    space, a split only of a kind that ships one, the zero-shot split."""
    ds = config["dataset"]
    kind = dataset_kind(ds)
    if ds["crop"] > ds["resize"]:
        raise ConfigError(
            f"config key 'dataset.crop': {ds['crop']} exceeds dataset.resize {ds['resize']}"
        )
    if "stored_max_side" in ds and ds.get("resolution") != "stored":
        raise ConfigError(
            "config key 'dataset.stored_max_side': only with dataset.resolution: stored (the "
            f"resolution is {ds.get('resolution', 'crop')!r}, where every image is the "
            f"{ds['crop']}x{ds['crop']} crop)"
        )
    space = dataset_label_space(ds)
    if kind.classes is not None:
        _check_own_classes(ds, space, kind)
    if ds["split"] != "all" and not kind.splits:
        with_split = split_kinds()
        only = "the only kind" if len(with_split) == 1 else "the kinds"
        raise ConfigError(
            f"config key 'dataset.split': {ds['split']!r} needs dataset.kind "
            f"{' or '.join(map(repr, with_split))} ({only} with a train/test split), not "
            f"{kind.name!r}"
        )
    if ds["zero_shot"] is not None:
        zero_shot_classes(ds)


def dataset_label_space(ds: Mapping) -> LabelSpace:
    """The dataset's label space (``dataset.label_space``), or a ConfigError naming the key."""
    try:
        return get_label_space(ds["label_space"])
    except LabelSpaceError as exc:
        raise ConfigError(f"config key 'dataset.label_space': {exc}") from None


def _check_own_classes(ds: Mapping, space: LabelSpace, kind: DatasetKind) -> None:
    """A kind whose tree defines its classes (a layout): the label space is its own, and the
    tree's classes are the label space's, in order (or, ``ordered_by_label_space``, among them)."""
    if space.is_imagenet1k:
        raise ConfigError(
            f"config key 'dataset.label_space': dataset.kind {kind.name!r} has its own classes; "
            "give them a label space {name, class_names, num_classes} (docs/datasets.md)"
        )
    try:
        classes = kind.classes(ds["path"])
    except DatasetError as exc:
        raise ConfigError(f"config key 'dataset.path': {exc}") from None
    if kind.ordered_by_label_space and space.class_names is not None:
        extra = sorted(set(classes) - set(space.class_names))
        if extra:
            raise ConfigError(
                f"config key 'dataset.label_space': class folder(s) {extra[:5]} of "
                f"{ds['path']} are not classes of label space {space.name!r}"
            )
        return
    if len(classes) != space.num_classes:
        raise ConfigError(
            f"config key 'dataset.label_space': label space {space.name!r} has "
            f"{space.num_classes} classes but the {kind.name} tree {ds['path']} has {len(classes)}"
        )
    if space.class_names is not None and list(space.class_names) != classes:
        k = next(
            i for i, (a, b) in enumerate(zip(space.class_names, classes, strict=True)) if a != b
        )
        raise ConfigError(
            f"config key 'dataset.label_space': class {k} is {space.class_names[k]!r} in the "
            f"label space but {classes[k]!r} in the {kind.name} tree (the class order must match)"
        )


def zero_shot_classes(ds: Mapping) -> tuple[list[int], list[int]]:
    """Seen and unseen class indices of ``dataset.zero_shot`` (a ConfigError naming the key)."""
    space = dataset_label_space(ds)
    if space.class_names is None:
        raise ConfigError(
            "config key 'dataset.zero_shot': needs class names in dataset.label_space "
            "(class_names) to find the split's classes"
        )
    split = ds["zero_shot"]
    try:
        return read_zero_shot_split(split["seen"], split["unseen"], space.class_names)
    except DatasetError as exc:
        raise ConfigError(f"config key 'dataset.zero_shot': {exc}") from None


def _check_corruptions(config: Mapping) -> None:
    from vcrbench.corruptions import get_corruption, list_corruptions

    known, problems = list_corruptions(), []
    for name, opts in config["corruptions"].items():
        opts = opts or {}
        if name == paths.EXAMPLES_OVERVIEW_NAME:
            problems.append(
                f"config key 'corruptions.{name}': the name {name!r} is reserved "
                f"({paths.EXAMPLES_OVERVIEW.format(ext='png')} shows every corruption)"
            )
            continue
        if name not in known and "function" not in opts:
            problems.append(
                f"config key 'corruptions.{name}': unknown corruption {name!r}"
                f"{did_you_mean(name, known)}; known: {', '.join(sorted(known))}; "
                "or give `function: package.module:function`"
            )
            continue
        try:
            get_corruption(name, opts)
        except (ValueError, KeyError, TypeError, ImportError) as exc:
            problems.append(f"config key 'corruptions.{name}': {exc}")
    raise_all(problems)


def check_model_entries_given(config: Mapping) -> None:
    """An empty model entry (``name:`` or ``name: {}``), named before the schema's check, whose
    message would only say the entry fits none of its forms."""
    from vcrbench.models import SOURCES

    models, problems = config.get("models"), []
    for name, entry in models.items() if isinstance(models, Mapping) else ():
        if not entry or (isinstance(entry, Mapping) and not {"source", "base"} & set(entry)):
            got = "is empty" if not entry else f"has no 'source' or 'base' (keys: {sorted(entry)})"
            problems.append(
                f"config key 'models.{name}': the entry {got}; give its source and id, e.g. "
                f"{{source: timm, id: resnet50}} (sources: {', '.join(sorted(SOURCES))}), or "
                "`base: <another model>` to start from that model's entry (docs/models.md)"
            )
    raise_all(problems)


def _check_models(config: Mapping) -> None:
    from vcrbench.models import ModelSpec
    from vcrbench.plan.models import expand_bases

    data_space = dataset_label_space(config["dataset"])
    for name, entry in expand_bases(config["models"]).items():
        checkpoint = entry.get("checkpoint")  # with an http(s) url, fetch_weights gets it
        if checkpoint and not Path(checkpoint).is_file() and not fetched_checkpoint(entry):
            raise ConfigError(
                f"config key 'models.{name}.checkpoint': weights file {checkpoint} does not exist"
            )
    for name, entry in model_entries(config).items():
        try:
            spec = ModelSpec.from_config(name, model_settings(entry))
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"config key 'models.{name}': {exc}") from exc
        try:
            check_compatible(spec.output_space, data_space, name)
        except LabelSpaceError as exc:
            raise ConfigError(f"config key 'models.{name}.label_space': {exc}") from None
        declared = spec.kwargs.get("num_classes")
        if declared is not None and declared != data_space.num_classes:
            raise ConfigError(
                f"config key 'models.{name}.kwargs.num_classes': model {name!r} declares a head "
                f"of {declared} classes but label space {data_space.name!r} has "
                f"{data_space.num_classes}"
            )


def model_check_entries(config: Mapping) -> dict[str, dict]:
    """The configured model entries (``base`` expanded; not the fine-tuned ones, whose weights the
    workflow writes) as the run checks them before any job (``rules/checks.smk``), keys sorted."""
    from vcrbench.plan.config import canonical
    from vcrbench.plan.models import expand_bases

    configured = set(expand_bases(config["models"]))
    return {  # model_entries: `label_space: dataset` resolved to the dataset's label space
        name: canonical(model_settings(entry))
        for name, entry in model_entries(config).items()
        if name in configured
    }
