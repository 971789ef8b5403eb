"""The ``figures`` block, and the figures and tables a run makes.

The block itself is checked by :func:`vcrbench.figures.options.check_options` (the schema, and
colours). The figures and tables themselves are declared in :mod:`vcrbench.plan.products`;
:func:`figure_targets` lists those a config asks for.
"""

from __future__ import annotations

from collections.abc import Mapping

from vcrbench.figures.options import DEFAULT_FAMILY
from vcrbench.plan.config import model_entries
from vcrbench.plan.models import training_method
from vcrbench.plan.retrain import retrained_pairs, run_settings


def model_families(config: Mapping) -> dict[str, str]:
    """``{model: family}`` of every model the run evaluates (``other`` where not given)."""
    return {
        name: str(entry.get("family") or DEFAULT_FAMILY)
        for name, entry in model_entries(config).items()
    }


def model_descriptions(config: Mapping) -> dict[str, dict[str, str]]:
    """``{model: {"architecture", "training", "family", "source"}}`` for Table 1, in the run's
    order: the entry's ``architecture`` (``""`` where it gives none: the table then names the
    network the inference job built), its training method
    (:func:`~vcrbench.plan.models.training_method`), its family and its source with its library
    and id (``checkpoint: torchvision resnet50``). Nothing else of the entry, so that no other
    key reruns the table."""
    families = model_families(config)
    out = {}
    for name, entry in model_entries(config).items():
        detail = " ".join(str(entry[k]) for k in ("library", "id") if entry.get(k))
        source = str(entry.get("source") or "")
        out[name] = {
            "architecture": str(entry.get("architecture") or ""),
            "training": training_method(entry),
            "family": families[name],
            "source": f"{source}: {detail}" if detail else source,
        }
    return out


def retrained_corruptions(config: Mapping) -> dict[str, list[str]]:
    """``{fine-tuned model: corruptions it was trained on}`` (Table 3 puts, in each corruption's
    row, the model trained on it)."""
    return {
        tuned: [str(c) for c in run_settings(config, tuned)["corruptions"]]
        for tuned in retrained_pairs(config)
    }


def figure_targets(config: Mapping) -> list[str]:
    """Every figure and table the figures stage makes for ``config`` (what ``rule all`` and
    ``rule paper_figures`` ask for): those of every declared product
    (:func:`vcrbench.plan.products.targets`)."""
    from vcrbench.plan.products import targets

    return targets(config)
