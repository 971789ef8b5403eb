"""The model sources by name: a leaf registry (no torch, no other vcrbench model module).

A source is a function ``build(spec, device) -> Built`` registered under a name with
:func:`register_source`. The package (``vcrbench.models``) imports the built-in source modules
(``timm_models``, ``torchvision_models``, …), which register themselves and import torch only when
they build, so validating a config's model entries costs no torch import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torch import nn

    from vcrbench.models.spec import ModelSpec


@dataclass
class Built:
    """What a source returns: the bare network, its own preprocessing, provenance."""

    net: nn.Module
    #: Preprocessing the weights were trained with (keys of :class:`Preprocessing`), if known.
    preprocessing: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    #: Number of output classes if the source knows it (else found by a forward pass).
    num_classes: int | None = None

    def apply_checkpoint(self, spec: ModelSpec) -> Built:
        """Load ``spec.checkpoint`` (if set) into the net; a RobustBench normaliser sets mean/std."""
        if spec.checkpoint is None:
            return self
        from vcrbench.models.weights import load_weights

        normaliser = load_weights(
            self.net,
            spec.checkpoint,
            spec.name,
            strict=spec.strict,
            use_ema=spec.use_ema,
            url=spec.url,
        )
        if normaliser is not None:
            self.preprocessing["mean"], self.preprocessing["std"] = normaliser
        self.info["checkpoint"] = str(spec.checkpoint)
        return self


#: ``build(spec: ModelSpec, device: torch.device) -> Built``.
SourceBuilder = Callable[..., Built]
SOURCES: dict[str, SourceBuilder] = {}


def register_source(name: str) -> Callable[[SourceBuilder], SourceBuilder]:
    """Decorator: register ``build(spec, device) -> Built`` as the model source ``name``."""

    def deco(fn: SourceBuilder) -> SourceBuilder:
        SOURCES[name] = fn
        return fn

    return deco

