"""The rules' view of a config: :class:`Plan` holds the validated config and gives every list,
input function, param function and resource set the rule files use, in one style (methods of
``PLAN``, taking the job's ``wildcards`` where they depend on it).

``Plan`` itself holds what every stage reads (the lists of names, single settings, config blocks,
stage versions, resources) and the workflow's targets; the methods of each stage's rules are its
facets, :mod:`vcrbench.plan.facets` (test sets, inference and estimates, humans, retraining).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence

from vcrbench.figures.options import check_options
from vcrbench.plan import config as cfg
from vcrbench.plan import figures, humans, paths, resources, versions
from vcrbench.plan import retrain as rt
from vcrbench.plan.config import canonical
from vcrbench.plan.facets.humans import HumanRules
from vcrbench.plan.facets.inference import InferenceRules
from vcrbench.plan.facets.retrain import RetrainRules
from vcrbench.plan.facets.testsets import TestSetRules
from vcrbench.plan.models import defense_pairs
from vcrbench.vocab import IMAGENET1K


def alternatives(names: Sequence[str]) -> str:
    """A wildcard constraint matching exactly ``names`` (a pattern that never matches if none)."""
    return "|".join(re.escape(n) for n in names) if names else r"(?!)"


class Plan(TestSetRules, InferenceRules, HumanRules, RetrainRules):
    """What the workflow builds for one validated config (:func:`vcrbench.plan.validate`)."""

    def __init__(self, config: Mapping) -> None:
        self.config = config
        self.corruptions = cfg.corruption_names(config)
        self.model_entries = cfg.model_entries(config)
        self.models = list(self.model_entries)
        self.imagenet_c = cfg.imagenet_c_corruptions(config)
        #: Images of the clean set as the config gives them (sizes the ImageNet-C sets and jobs).
        self.clean_images = cfg.clean_set_size(config)
        self.human_references = humans.human_references(config)  # corruption -> (ref, how)
        self.references = humans.references_in_use(config)
        self.geirhos_references = humans.geirhos_references(config)
        self.runs = rt.run_names(config)
        self.figure_options = check_options(config["figures"])
        self.families = figures.model_families(config)
        self.model_descriptions = figures.model_descriptions(config)
        self.reference_info = humans.reference_info(config)
        self.retrained_pairs = rt.retrained_pairs(config)
        self.retrained_corruptions = figures.retrained_corruptions(config)
        self.dataset_label_space = cfg.dataset_label_space_name(config)
        self.zero_shot = _zero_shot(config)
        #: ``{defended model: undefended twin}`` (docs/defenses.md).
        self.defense_pairs = defense_pairs(self.model_entries)

    # ------------------------------------------------------------------ settings

    def clean_stored_output(self) -> dict:
        """The clean set's stored images, an output of its job with
        ``dataset.resolution: stored``."""
        return {"stored": paths.CLEAN_STORED} if cfg.dataset_settings(self.config).stored else {}

    def measurement(self) -> dict:
        """Extra params of the jobs that measure Δv
        (:func:`vcrbench.plan.config.measurement_params`: ``grey`` where ``vif.grey`` is given)."""
        return cfg.measurement_params(self.config)

    @property
    def dataset_label_space_entry(self) -> str | dict:
        """``dataset.label_space`` as inference checks models against it (keys sorted)."""
        return canonical(self.config["dataset"]["label_space"])

    def zero_shot_tables_settings(self) -> dict | None:
        """What the zero-shot tables need: the classes, their names and the split."""
        if self.zero_shot is None:
            return None
        from vcrbench.labels import get_label_space

        space = get_label_space(self.config["dataset"]["label_space"])
        names = list(space.class_names) if space.class_names is not None else None
        return {"num_classes": space.num_classes, "class_names": names, **self.zero_shot}

    @property
    def extra_formats(self) -> list[str]:
        """Figure formats written beside the PNG the report shows."""
        return [f for f in self.figure_options["formats"] if f != "png"]

    def setting(self, key: str):
        """One validated config value by its dotted key (``"sampling.shard_size"``), as the config
        gives it: how rules read a single setting."""
        value = self.config
        for part in key.split("."):
            value = value[part]
        return value

    def section(self, name: str) -> dict:
        """A config block with its keys sorted (a rule's params: reordered keys rerun nothing),
        without the keys that rules carry only when set
        (:func:`vcrbench.plan.config.params_section`)."""
        return cfg.params_section(self.config, name)

    @staticmethod
    def version(stage: str) -> int:
        """The version of ``stage``'s computation, every rule's ``version`` param
        (:mod:`vcrbench.plan.versions`)."""
        return versions.version(stage)

    def resources(self, rule: str, **computed) -> Mapping:
        """The resources of ``rule``, functions of the job and its attempt
        (:mod:`vcrbench.plan.resources`)."""
        return resources.rule_resources(self.config, rule, self.clean_images, **computed)

    # ------------------------------------------------------------------ targets

    @functools.cached_property
    def figure_targets(self) -> list[str]:
        return figures.figure_targets(self.config)

    def final_outputs(self, wildcards=None) -> list[str]:
        """What ``snakemake`` builds: the test sets and predictions are products in their own
        right (and listing them means a deleted shard is rebuilt, with what depends on it)."""
        outputs = [
            *self.all_shard_files(),
            *self.imagenet_c_files(),
            *self.prediction_files(),
            paths.COVERAGE,
            paths.DEFINITIONS,
            paths.VCR_METRICS,
            paths.MODEL_DIFFERENCES,
            *self.training_logs(),
        ]
        if self.geirhos_references:
            outputs += [paths.GEIRHOS_DNN_TABLE, paths.GEIRHOS_CONSISTENCY]
        if len(self.models) > 1:
            outputs.append(paths.MODEL_CONSISTENCY)
        outputs += [paths.CLEAN_CORRECT, paths.CLEAN_CORRECT_CURVES]
        if self.zero_shot is not None:
            outputs += [paths.ZERO_SHOT_CLASSES, paths.ZERO_SHOT_TRANSITIONS]
            if self.zero_shot["unseen"] is not None and self.config["inference"]["save_logprobs"]:
                outputs += [paths.ZERO_SHOT_UNSEEN_ONLY, paths.ZERO_SHOT_UNSEEN_ONLY_CURVES]
        if self.defense_pairs:
            outputs.append(paths.DEFENSES_TABLE)
        if self.config["humans"]["conditions_table"]:
            outputs.append(paths.GEIRHOS_CONDITIONS)
        if self.config["humans"]["screening"]["path"] is not None:
            outputs.append(paths.SCREENING_TABLE)
        if self.geirhos_references and self.config["humans"]["trained_table"]:
            outputs.append(paths.GEIRHOS_TRAINED_TABLE)
        return outputs + self.figure_targets


def _zero_shot(config: Mapping) -> dict | None:
    """``{"seen": [...], "unseen": [...]}`` (None each without ``dataset.zero_shot``) for a dataset
    with its own classes, whose estimates add the zero-shot properties; None for ImageNet-1k."""
    from vcrbench.plan.checks import zero_shot_classes

    ds = config["dataset"]
    if cfg.dataset_label_space_name(config) == IMAGENET1K:
        return None
    if ds["zero_shot"] is None:
        return {"seen": None, "unseen": None}
    seen, unseen = zero_shot_classes(ds)
    return {"seen": seen, "unseen": unseen}
