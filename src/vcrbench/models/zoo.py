"""The ``models:`` block of a config: the JSON schema of one entry, and the :class:`ModelZoo`
that validates every entry at once (no torch) and builds a model only when asked for
(:func:`vcrbench.models.loading.load_model`)."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from vcrbench.errors import ModelConfigError
from vcrbench.models.sources import SOURCES
from vcrbench.models.spec import (
    CHECKPOINT_LIBRARIES,
    HUB_SOURCES,
    INTERPOLATIONS,
    ModelSpec,
)
from vcrbench.vocab import IMAGENET1K, PRECISIONS

if TYPE_CHECKING:
    import torch

    from vcrbench.models.classifier import Classifier

log = logging.getLogger(__name__)


def entry_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of one ``models:`` entry, for the config schema.

    It checks key names and value types; which keys apply to which source, and the values that
    depend on the installed libraries, are checked by :meth:`ModelSpec.from_config`.
    """
    string = {"type": "string"}
    triple = {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3}
    flag = {"type": "boolean"}
    properties: dict[str, Any] = {
        "source": {"enum": list(SOURCES)},
        "id": string,
        "family": string,
        "url": string,
        "notes": string,
        "kwargs": {"type": "object"},
        "label_space": {
            "oneOf": [
                {"const": IMAGENET1K},
                {
                    "type": "object",
                    "required": ["name"],
                    "additionalProperties": False,
                    "properties": {
                        "name": string,
                        "num_classes": {"type": "integer", "minimum": 1},
                        "class_names": {"oneOf": [string, {"type": "array", "items": string}]},
                    },
                },
            ]
        },
        "input_size": {"type": "integer", "minimum": 1},
        "interpolation": {"enum": list(INTERPOLATIONS)},
        "mean": triple,
        "std": triple,
        "crop": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "precision": {"enum": list(PRECISIONS)},
        "batch_size": {"type": "integer", "minimum": 1},
        "pretrained": {"type": ["boolean", "string"]},
        "weights": {"type": ["string", "null"]},
        "checkpoint": string,
        "use_ema": flag,
        "strict": flag,
        "library": {"enum": list(CHECKPOINT_LIBRARIES)},
        "repo": string,
        "hub_source": {"enum": list(HUB_SOURCES)},
        "prompt": string,
        "class_names": {"oneOf": [{"enum": ["openai", "wordnet"]}, {"type": "array"}]},
        "defense": {"type": ["string", "object", "null"]},
        # the workflow's (what the model's jobs are given; the config schema details it)
        "resources": {"type": "object"},
    }
    return {
        "type": "object",
        "required": ["source", "id"],
        "additionalProperties": False,
        "properties": properties,
    }


class ModelZoo(Mapping[str, ModelSpec]):
    """The ``models:`` mapping of a config, validated at once and built on demand.

    ``zoo[name]`` is the :class:`ModelSpec`; ``zoo.load(name, device)`` builds the model.
    """

    def __init__(self, entries: Mapping[str, Mapping]) -> None:
        if not isinstance(entries, Mapping):
            raise ModelConfigError("models: expected a mapping of model name -> entry")
        self._specs = {name: ModelSpec.from_config(name, e) for name, e in entries.items()}

    def __getitem__(self, name: str) -> ModelSpec:
        try:
            return self._specs[name]
        except KeyError:
            raise ModelConfigError(
                f"unknown model {name!r}; configured: {', '.join(self._specs)}"
            ) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def load(self, name: str, device: str | torch.device | None = "cpu") -> Classifier:
        from vcrbench.models.loading import load_model

        return load_model(self[name], device)
