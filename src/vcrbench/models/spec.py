"""Model entries of the config: validation into a :class:`ModelSpec`, and preprocessing settings.

A model is named in config by a name and an entry ``{source, id, ...}``; see ``docs/models.md`` for
every key. :meth:`ModelSpec.from_config` checks the entry (unknown keys, keys that do not apply to
the source, bad values) without building anything: models are built on demand by
:func:`vcrbench.models.load_model`.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vcrbench.defenses import Defense, get_defense
from vcrbench.errors import DefenseError, ModelConfigError
from vcrbench.labels import LabelSpace, LabelSpaceError, get_label_space
from vcrbench.models.sources import SOURCES
from vcrbench.vocab import MODEL_WORKFLOW_KEYS, PRECISIONS

INTERPOLATIONS = ("bilinear", "bicubic", "nearest")
SHA256_RE = re.compile(r"[0-9a-fA-F]{64}")
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
#: Side of the test images every stage produces (resize 256, centre crop 224).
TEST_IMAGE_SIZE = 224


@dataclass(frozen=True)
class Preprocessing:
    """How a model's input is made from a uint8 test image.

    The test images are already the ImageNet evaluation view (shorter side 256, centre 224x224).
    ``crop`` (a fraction, default 1: keep all) centre-crops that image further, then it is resized
    to ``input_size`` x ``input_size`` with ``interpolation`` (antialiased, rounded and clipped to
    0..255 like a PIL resize) when the sizes differ, scaled to [0, 1] and normalised with
    ``mean``/``std``.
    """

    input_size: int = TEST_IMAGE_SIZE
    interpolation: str = "bilinear"
    mean: tuple[float, float, float] = IMAGENET_MEAN
    std: tuple[float, float, float] = IMAGENET_STD
    crop: float = 1.0

    def __post_init__(self) -> None:
        if int(self.input_size) < 1:
            raise ValueError(f"input_size must be positive, not {self.input_size}")
        if self.interpolation not in INTERPOLATIONS:
            raise ValueError(
                f"interpolation {self.interpolation!r} is not one of {', '.join(INTERPOLATIONS)}"
            )
        if len(self.mean) != 3 or len(self.std) != 3 or any(s <= 0 for s in self.std):
            raise ValueError(f"mean and std need 3 values (std > 0), got {self.mean}, {self.std}")
        if not 0 < self.crop <= 1:
            raise ValueError(f"crop must be a fraction in (0, 1], not {self.crop}")


# Keys every entry may have, and the keys that each source adds. Defaults are in ModelSpec.
COMMON_KEYS = frozenset(
    {
        "source",
        "id",
        "family",
        "url",
        "notes",
        "kwargs",
        "label_space",
        "input_size",
        "interpolation",
        "mean",
        "std",
        "crop",
        "precision",
        "batch_size",
        "defense",
    }
)
#: Keys of an entry that are the workflow's, not the model's (what its jobs are given, what
#: Table 1 says of it): accepted and ignored here.
WORKFLOW_KEYS = MODEL_WORKFLOW_KEYS
#: The keys of a source whose entries take a weights file for the whole network (each source's
#: own keys are registered with it: ``vcrbench.models.sources.register_source``).
CHECKPOINT_KEYS = frozenset({"checkpoint", "use_ema", "strict", "sha256"})
CHECKPOINT_LIBRARIES = ("timm", "torchvision", "python")
HUB_SOURCES = ("github", "local")
DEFAULT_CLIP_PROMPT = "a picture of {}"


@dataclass(frozen=True)
class ModelSpec:
    """A validated model entry. Build the model with :func:`vcrbench.models.load_model`."""

    name: str
    source: str
    id: str
    family: str = "other"
    url: str | None = None
    notes: str | None = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    label_space: LabelSpace | None = None  # None: ImageNet-1k
    # preprocessing overrides (None: the model's own)
    input_size: int | None = None
    interpolation: str | None = None
    mean: tuple[float, float, float] | None = None
    std: tuple[float, float, float] | None = None
    crop: float | None = None
    precision: str = "auto"
    batch_size: int | None = None
    # weights
    pretrained: bool | str | None = True
    weights: str | None = "DEFAULT"
    checkpoint: Path | None = None
    #: The checkpoint file's sha256 (64 hex digits, lower case), checked when it is fetched.
    sha256: str | None = None
    use_ema: bool = False
    strict: bool = True
    library: str = "timm"
    repo: str | None = None
    hub_source: str = "github"
    prompt: str = DEFAULT_CLIP_PROMPT
    class_names: str | tuple[str, ...] = "openai"
    #: A preprocessing applied to every image before the model's own (docs/defenses.md).
    defense: Defense | None = None
    #: The values of a registered source's own keys that no field above holds (a source without
    #: an entry parser keeps its keys here, as given).
    options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_config(cls, name: str, entry: Mapping[str, Any]) -> ModelSpec:
        """Validate one ``models:`` entry of the config (raises :class:`ModelConfigError`)."""
        where = f"model {name!r}"
        if not isinstance(entry, Mapping):
            raise ModelConfigError(f"{where}: the entry must be a mapping, not {entry!r}")
        entry = dict(entry)
        source = entry.get("source")
        if source not in SOURCES:
            raise ModelConfigError(
                f"{where}: unknown source {source!r}; known sources: {', '.join(SOURCES)}"
            )
        registered = SOURCES[source]
        allowed = COMMON_KEYS | WORKFLOW_KEYS | registered.keys
        unknown = sorted(set(entry) - allowed)
        if unknown:
            raise ModelConfigError(
                f"{where}: key(s) {unknown} do not apply to source {source!r}; "
                f"allowed: {sorted(allowed)}"
            )
        if not isinstance(entry.get("id"), str) or not entry["id"]:
            raise ModelConfigError(f"{where}: needs an 'id' (a string) for source {source!r}")
        values: dict[str, Any] = {"name": name, "source": source, "id": entry["id"]}
        for key in ("family", "url", "notes", "prompt", "repo"):
            if key in entry:
                if not isinstance(entry[key], str):
                    raise ModelConfigError(f"{where}: '{key}' must be a string")
                values[key] = entry[key]
        if "kwargs" in entry:
            if not isinstance(entry["kwargs"], Mapping):
                raise ModelConfigError(f"{where}: 'kwargs' must be a mapping")
            values["kwargs"] = copy.deepcopy(dict(entry["kwargs"]))
        if "label_space" in entry:
            try:
                values["label_space"] = get_label_space(entry["label_space"])
            except LabelSpaceError as exc:
                raise ModelConfigError(f"{where}: {exc}") from None
        _preprocessing_values(entry, values, where)
        if entry.get("defense") is not None:
            try:
                values["defense"] = get_defense(entry["defense"])
            except DefenseError as exc:
                raise ModelConfigError(f"{where}: {exc}") from None
        if "precision" in entry:
            if entry["precision"] not in PRECISIONS:
                raise ModelConfigError(
                    f"{where}: precision {entry['precision']!r} is not one of {PRECISIONS}"
                )
            values["precision"] = entry["precision"]
        if "batch_size" in entry:
            values["batch_size"] = positive_int(entry["batch_size"], "batch_size", where)
        for key in ("use_ema", "strict"):
            if key in entry:
                if not isinstance(entry[key], bool):
                    raise ModelConfigError(f"{where}: '{key}' must be true or false")
                values[key] = entry[key]
        if entry.get("checkpoint") is not None:
            if not isinstance(entry["checkpoint"], str | os.PathLike):
                raise ModelConfigError(f"{where}: 'checkpoint' must be a file path")
            values["checkpoint"] = Path(entry["checkpoint"])
        if entry.get("sha256") is not None:
            values["sha256"] = _sha256(entry["sha256"], "checkpoint" in values, where)
        if registered.parse is not None:
            registered.parse(entry, values, where)
        else:
            options = {k: copy.deepcopy(entry[k]) for k in sorted(registered.keys) if k in entry}
            if options:
                values["options"] = options
        return cls(**values)

    @property
    def output_space(self) -> LabelSpace:
        """The label space of the model's outputs (ImageNet-1k unless the entry says otherwise)."""
        return get_label_space(self.label_space)

    def override(self, **changes: Any) -> ModelSpec:
        return replace(self, **changes)

    def to_config(self) -> dict:
        """A JSON-serialisable description (stored in prediction files' metadata)."""
        out: dict[str, Any] = {"source": self.source, "id": self.id, "family": self.family}
        defaults = ModelSpec(name=self.name, source=self.source, id=self.id)
        for key in (
            "kwargs",
            "input_size",
            "interpolation",
            "mean",
            "std",
            "crop",
            "precision",
            "batch_size",
            "pretrained",
            "weights",
            "checkpoint",
            "sha256",
            "use_ema",
            "strict",
            "library",
            "repo",
            "hub_source",
            "prompt",
            "class_names",
        ):
            value = getattr(self, key)
            if value != getattr(defaults, key):
                if isinstance(value, Path):
                    value = str(value)
                elif isinstance(value, tuple):
                    value = list(value)
                elif isinstance(value, Mapping):
                    value = dict(value)
                out[key] = value
        if self.label_space is not None:
            out["label_space"] = self.label_space.to_config()
        if self.defense is not None:
            out["defense"] = self.defense.to_config()
        out.update(copy.deepcopy(dict(self.options)))
        return out


def _sha256(value: Any, has_checkpoint: bool, where: str) -> str:
    if not isinstance(value, str) or not SHA256_RE.fullmatch(value):
        raise ModelConfigError(f"{where}: 'sha256' must be 64 hex digits, not {value!r}")
    if not has_checkpoint:
        raise ModelConfigError(f"{where}: 'sha256' is the 'checkpoint' file's; give 'checkpoint'")
    return value.lower()


def positive_int(value: Any, key: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ModelConfigError(f"{where}: '{key}' must be a positive integer, not {value!r}")
    return value


def _preprocessing_values(entry: Mapping, values: dict, where: str) -> None:
    if "input_size" in entry:
        values["input_size"] = positive_int(entry["input_size"], "input_size", where)
    if "interpolation" in entry:
        if entry["interpolation"] not in INTERPOLATIONS:
            raise ModelConfigError(
                f"{where}: interpolation {entry['interpolation']!r} is not one of {INTERPOLATIONS}"
            )
        values["interpolation"] = entry["interpolation"]
    for key in ("mean", "std"):
        if key in entry:
            value = entry[key]
            if (
                not isinstance(value, list | tuple)
                or len(value) != 3
                or not all(isinstance(v, int | float) for v in value)
            ):
                raise ModelConfigError(f"{where}: '{key}' must be a list of 3 numbers")
            if key == "std" and any(v <= 0 for v in value):
                raise ModelConfigError(f"{where}: 'std' values must be positive")
            values[key] = tuple(float(v) for v in value)
    if "crop" in entry:
        crop = entry["crop"]
        if isinstance(crop, bool) or not isinstance(crop, int | float) or not 0 < crop <= 1:
            raise ModelConfigError(f"{where}: 'crop' must be a fraction in (0, 1], not {crop!r}")
        values["crop"] = float(crop)
