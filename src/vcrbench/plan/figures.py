"""The ``figures`` block, and the figures and tables a run makes.

The block itself is checked by :func:`vcrbench.figures.options.check_options` (the schema, and
colours). :func:`figure_targets` lists every figure and table of the figures stage for a config
(what ``rule all`` and ``rule paper_figures`` ask for).
"""

from __future__ import annotations

from collections.abc import Mapping

from vcrbench.figures.options import DEFAULT_FAMILY, check_options
from vcrbench.plan import paths
from vcrbench.plan.config import (
    corruption_names,
    dataset_label_space_name,
    imagenet_c_corruptions,
    model_entries,
)
from vcrbench.plan.humans import geirhos_references, human_references, references_in_use
from vcrbench.plan.models import defense_pairs
from vcrbench.plan.retrain import retrained_pairs, run_settings
from vcrbench.vocab import IMAGENET1K

#: Formats of the paper's tables.
TABLE_FORMATS = ("csv", "md", "tex")


def model_families(config: Mapping) -> dict[str, str]:
    """``{model: family}`` of every model the run evaluates (``other`` where not given)."""
    return {
        name: str(entry.get("family") or DEFAULT_FAMILY)
        for name, entry in model_entries(config).items()
    }


def model_sources(config: Mapping) -> dict[str, dict[str, str]]:
    """``{model: {"family", "source"}}`` for Table 1, in the run's order; ``source`` is the
    entry's source with its library and id (``checkpoint: torchvision resnet50``)."""
    families = model_families(config)
    out = {}
    for name, entry in model_entries(config).items():
        detail = " ".join(str(entry[k]) for k in ("library", "id") if entry.get(k))
        source = str(entry.get("source") or "")
        out[name] = {
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


def paper_table_names(config: Mapping) -> list[str]:
    """Tables of ``models_table``, ``paper_tables`` and ``retraining_table``, as paths under
    :data:`~vcrbench.plan.paths.PAPER_TABLES` without suffix."""
    names = ["table1_models", "table2_coverage", "metrics"]
    names += [f"leaderboard/{c}" for c in corruption_names(config)]
    if retrained_pairs(config):
        names.append("table3_retraining")
    return names


def figure_targets(config: Mapping) -> list[str]:
    """Every figure and table the figures stage makes for ``config``: per corruption its curves
    and Δv histograms and example grid, HMRI/MRSI bars where it has a human reference, the ImageNet-C scatter where
    it has an ImageNet-C set; the human similarity figure and table when human references are in
    use; the defenses figure when a defended model has an undefended twin; the paper's tables."""
    formats = check_options(config["figures"])["formats"]
    corruptions = corruption_names(config)
    imagenet_c = imagenet_c_corruptions(config)
    with_humans = [c for c, (ref, _) in human_references(config).items() if ref]
    references = references_in_use(config)
    per_corruption = [("curves", c) for c in corruptions]
    per_corruption += [("dv_histograms", c) for c in corruptions]
    per_corruption += [("examples", c) for c in corruptions]
    per_corruption += [("hmri_mrsi", c) for c in corruptions if c in with_humans]
    per_corruption += [("imagenet_c_vs_vcr", c) for c in imagenet_c]
    out = [
        paths.fill(paths.FIGURE, kind=kind, corruption=c, ext=fmt)
        for kind, c in per_corruption
        for fmt in formats
    ]
    if references:
        out += [paths.fill(paths.HUMAN_SIMILARITY_FIGURE, ext=fmt) for fmt in formats]
    if geirhos_references(config):
        out += [paths.fill(paths.GEIRHOS_DNN_FIGURE, ext=fmt) for fmt in formats]
        out += [paths.fill(paths.GEIRHOS_CONSISTENCY_FIGURE, ext=fmt) for fmt in formats]
    if len(model_entries(config)) > 1:
        out += [paths.fill(paths.MODEL_CONSISTENCY_FIGURE, ext=fmt) for fmt in formats]
    if defense_pairs(model_entries(config)):
        out += [paths.fill(paths.DEFENSES_FIGURE, ext=fmt) for fmt in formats]
    out += [
        paths.fill(paths.PAPER_TABLE, name=name, ext=ext)
        for name in paper_table_names(config)
        for ext in TABLE_FORMATS
    ]
    if imagenet_c:
        out += [paths.IMAGENET_C_ACCURACY, paths.IMAGENET_C_CLEAN_CORRECT]
        if dataset_label_space_name(config) == IMAGENET1K:
            out.append(paths.IMAGENET_C_MCE)
    out.append(paths.CORRUPTION_CATEGORIES)
    if references:
        out.append(paths.HUMAN_SIMILARITY)
    return out
