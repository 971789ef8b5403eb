"""The model sources by name: a leaf registry (no torch, no other vcrbench model module).

A source is a function ``build(spec, device) -> Built`` registered under a name with
:func:`register_source`, together with everything else the project knows about it: the keys its
config entries may have besides the common ones, how those keys are read into the
:class:`~vcrbench.models.spec.ModelSpec`, its check before a run (:mod:`vcrbench.models.checks`),
whether and how it can be fine-tuned (:mod:`vcrbench.plan.retrain`) and the name its entries are
looked up under in the throughput table (:mod:`vcrbench.plan.work`). The package
(``vcrbench.models``) imports the built-in source modules (``timm_models``,
``torchvision_models``, …), which register themselves and import torch only when they build or
check, so validating a config's model entries costs no torch import. docs/architecture.md, "Add a
model source", is the recipe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vcrbench.errors import ModelConfigError

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
        """Load ``spec.checkpoint`` (if set) into the net; a RobustBench normaliser sets
        mean/std."""
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
#: ``parse(entry, values, where)``: check the source's own keys of a config entry and put their
#: values into ``values`` (the :class:`ModelSpec` fields being assembled; ``where`` names the
#: model in errors). Without one, a source's keys are kept as given in ``ModelSpec.options``.
EntryParser = Callable[[Mapping[str, Any], dict[str, Any], str], None]
#: ``check(spec) -> (problems, classes of the head or None)``: what the source's library says of
#: an entry before any job runs (``problems``: ``(key of the entry, what is wrong)``).
SourceCheck = Callable[..., tuple[list[tuple[str, str]], int | None]]
#: ``fine_tuned(entry) -> entry``: the entry of a fine-tuned copy, from the base entry's kept
#: keys (its source included); the checkpoint is set afterwards.
FineTuned = Callable[[dict[str, Any]], dict[str, Any]]
#: ``throughput_name(entry) -> name``: the architecture an entry is looked up under in the
#: published throughput table (``data/planning/gpu_throughput.json``).
ThroughputName = Callable[[Mapping[str, Any]], str]
#: ``shipped(spec) -> path``: the weights file of a source whose weights ship in an installed
#: package (nothing to download); raises :class:`~vcrbench.errors.WeightsUnavailableError` naming
#: the package to install when it is not.
ShippedWeights = Callable[..., str]


def same_source(entry: dict[str, Any]) -> dict[str, Any]:
    """``fine_tuned`` of a source whose entries take a ``checkpoint`` of the whole network: the
    fine-tuned model keeps the source."""
    return entry


def architecture_of_id(entry: Mapping[str, Any]) -> str:
    """``throughput_name`` of a source whose ids are architecture names, a pretrained tag after a
    dot (``resnet18.fb_swsl_ig1b_ft_in1k`` -> ``resnet18``)."""
    return str(entry.get("id", "")).split(".")[0]


@dataclass(frozen=True)
class Source:
    """A registered model source: everything the project knows about it."""

    name: str
    build: SourceBuilder
    #: Keys its entries may have besides the common ones (``vcrbench.models.spec.COMMON_KEYS``).
    keys: frozenset[str] = frozenset()
    parse: EntryParser | None = None
    #: None: nothing to check before a run beyond the entry itself.
    check: SourceCheck | None = None
    #: None: its models cannot be fine-tuned (``retrain.runs.*.base``).
    fine_tuned: FineTuned | None = None
    #: None: ``source:id``, which the throughput table's aliases may map to an architecture.
    throughput_name: ThroughputName | None = None
    #: None: its weights are had by building the model once (``fetch_weights`` downloads them
    #: where the source downloads); else where they ship, found without building the model.
    shipped: ShippedWeights | None = None

    def architecture(self, entry: Mapping[str, Any]) -> str:
        """The name ``entry`` is looked up under in the throughput table (before aliases)."""
        if self.throughput_name is not None:
            return self.throughput_name(entry)
        return f"{self.name}:{entry.get('id', '')}"


SOURCES: dict[str, Source] = {}


def register_source(
    name: str,
    *,
    keys: Iterable[str] = (),
    parse: EntryParser | None = None,
    check: SourceCheck | None = None,
    fine_tuned: FineTuned | None = None,
    throughput_name: ThroughputName | None = None,
    shipped: ShippedWeights | None = None,
) -> Callable[[SourceBuilder], SourceBuilder]:
    """Decorator: register ``build(spec, device) -> Built`` as the model source ``name``, with
    its entry keys, their parser, its check, how it is fine-tuned, its throughput name and where
    its weights ship (see :class:`Source`; None leaves each out)."""

    def deco(fn: SourceBuilder) -> SourceBuilder:
        if name in SOURCES:
            raise ModelConfigError(f"model source {name!r} is already registered")
        SOURCES[name] = Source(
            name, fn, frozenset(keys), parse, check, fine_tuned, throughput_name, shipped
        )
        return fn

    return deco


def unregister_source(name: str) -> None:
    """Remove the source ``name`` (a test's own source, after the test)."""
    if name not in SOURCES:
        raise ModelConfigError(f"model source {name!r} is not registered")
    del SOURCES[name]


def get_source(name: str) -> Source:
    """The registered source ``name``; the error lists the known ones."""
    if name not in SOURCES:
        raise ModelConfigError(f"unknown source {name!r}; known sources: {', '.join(SOURCES)}")
    return SOURCES[name]
