"""The rules' view of a config: :class:`Plan` holds the validated config and gives every list,
input function, param function and resource set the rule files use, in one style (methods of
``PLAN``, taking the job's ``wildcards`` where they depend on it).
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
from vcrbench.plan.models import defense_pairs
from vcrbench.vocab import IMAGENET1K


def alternatives(names: Sequence[str]) -> str:
    """A wildcard constraint matching exactly ``names`` (a pattern that never matches if none)."""
    return "|".join(re.escape(n) for n in names) if names else r"(?!)"


class Plan:
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
        self.reference_info = humans.reference_info(config)
        self.retrained_pairs = rt.retrained_pairs(config)
        self.retrained_corruptions = figures.retrained_corruptions(config)
        self.dataset_label_space = cfg.dataset_label_space_name(config)
        self.zero_shot = _zero_shot(config)
        #: ``{defended model: undefended twin}`` (docs/defenses.md).
        self.defense_pairs = defense_pairs(self.model_entries)

    # ------------------------------------------------------------------ settings

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

    def section(self, name: str) -> dict:
        """A config block with its keys sorted (a rule's params: reordered keys rerun nothing)."""
        return canonical(self.config[name])

    @staticmethod
    def version(stage: str) -> int:
        """The version of ``stage``'s computation, every rule's ``version`` param
        (:mod:`vcrbench.plan.versions`)."""
        return versions.version(stage)

    def resources(self, rule: str, **computed) -> Mapping:
        """The resources of ``rule``, functions of the job and its attempt
        (:mod:`vcrbench.plan.resources`)."""
        return resources.rule_resources(self.config, rule, self.clean_images, **computed)

    # ------------------------------------------------------------------ test sets

    def shard_ids(self, corruption: str) -> list[str]:
        return cfg.shard_ids(self.config, corruption)

    def shard_files(self, wildcards) -> list[str]:
        """Every shard of one corruption's test set."""
        return [
            paths.fill(paths.SHARD, corruption=wildcards.corruption, shard=s)
            for s in self.shard_ids(wildcards.corruption)
        ]

    def group_shard_files(self, wildcards) -> list[str]:
        """The shards that one inference job (a group) reads."""
        shards = cfg.group_shards(self.config, wildcards.corruption, wildcards.group)
        return [paths.fill(paths.SHARD, corruption=wildcards.corruption, shard=s) for s in shards]

    def all_shard_files(self, wildcards=None) -> list[str]:
        return [
            paths.fill(paths.SHARD, corruption=c, shard=s)
            for c in self.corruptions
            for s in self.shard_ids(c)
        ]

    @functools.cache  # noqa: B019 - one Plan per workflow; a handful of corruptions
    def imagenet_c_shard_ids(self, corruption: str) -> list[str]:
        return cfg.imagenet_c_shard_ids(self.config, corruption, self.clean_images)

    @functools.cache  # noqa: B019
    def imagenet_c_group_ids(self, corruption: str) -> list[str]:
        return cfg.imagenet_c_group_ids(self.config, corruption, self.clean_images)

    def imagenet_c_n_shards(self, wildcards) -> int:
        """Shards planned for one corruption's ImageNet-C set (a param of its shard jobs)."""
        return len(self.imagenet_c_shard_ids(wildcards.corruption))

    def imagenet_c_files(self, wildcards=None) -> list[str]:
        """Every shard of every ImageNet-C set."""
        return [
            paths.fill(paths.IMAGENET_C_SHARD, corruption=c, shard=s)
            for c in self.imagenet_c
            for s in self.imagenet_c_shard_ids(c)
        ]

    def imagenet_c_group_shard_files(self, wildcards) -> list[str]:
        """The ImageNet-C shards that one inference job (a group) reads."""
        shards = cfg.imagenet_c_group_shards(
            self.config,
            wildcards.corruption,
            wildcards.group,
            self.imagenet_c_shard_ids(wildcards.corruption),
        )
        return [
            paths.fill(paths.IMAGENET_C_SHARD, corruption=wildcards.corruption, shard=s)
            for s in shards
        ]

    def corruption_options(self, wildcards) -> dict:
        """The config entry of one corruption (only it: other corruptions' changes do not rerun
        it)."""
        return canonical(cfg.corruption_options(self.config, wildcards.corruption))

    def n_samples(self, wildcards) -> int:
        return cfg.n_samples(self.config, wildcards.corruption)

    # ------------------------------------------------------------------ models

    def model_entry(self, wildcards) -> dict:
        """The config entry of one model (only it: adding a model reruns nothing of the others),
        without its ``resources`` (what a job is given cannot change its predictions)."""
        return canonical(cfg.model_settings(self.model_entries[wildcards.model]))

    def model_weights(self, wildcards) -> list[str]:
        return cfg.model_weights(self.config, wildcards.model)

    def prediction_group_files(self, wildcards) -> list[str]:
        """Every prediction file of one model on one corruption."""
        return [
            paths.fill(paths.PREDICTIONS_GROUP, model=wildcards.model, corruption=c, group=g)
            for c in [wildcards.corruption]
            for g in cfg.group_ids(self.config, c)
        ]

    def group_prediction_files(self, wildcards=None) -> list[str]:
        """Every model's predictions on every test set (not the clean or ImageNet-C ones)."""
        return [
            paths.fill(paths.PREDICTIONS_GROUP, model=m, corruption=c, group=g)
            for m in self.models
            for c in self.corruptions
            for g in cfg.group_ids(self.config, c)
        ]

    def prediction_files(self, wildcards=None) -> list[str]:
        """Every prediction file: on clean images, on each test set, on each ImageNet-C set."""
        files = []
        for model in self.models:
            files.append(paths.fill(paths.PREDICTIONS_CLEAN, model=model))
            for corruption in self.corruptions:
                files += [
                    paths.fill(paths.PREDICTIONS_GROUP, model=model, corruption=corruption, group=g)
                    for g in cfg.group_ids(self.config, corruption)
                ]
            files += self._imagenet_c_predictions(model)
        return files

    def _imagenet_c_predictions(self, model: str) -> list[str]:
        return [
            paths.fill(paths.PREDICTIONS_IMAGENET_C, model=model, corruption=c, group=g)
            for c in self.imagenet_c
            for g in self.imagenet_c_group_ids(c)
        ]

    def imagenet_c_prediction_files(self, wildcards=None) -> list[str]:
        """Every model's predictions on every group of every ImageNet-C set."""
        return [f for m in self.models for f in self._imagenet_c_predictions(m)]

    def clean_prediction_files(self, wildcards=None) -> list[str]:
        return [paths.fill(paths.PREDICTIONS_CLEAN, model=m) for m in self.models]

    # ------------------------------------------------------------------ estimates

    def metrics_files(self, wildcards=None) -> list[str]:
        return [
            paths.fill(paths.MODEL_METRICS, model=m, corruption=c)
            for m in self.models
            for c in self.corruptions
        ]

    def replicate_files(self, wildcards=None) -> list[str]:
        return [
            paths.fill(paths.MODEL_REPLICATES, model=m, corruption=c)
            for m in self.models
            for c in self.corruptions
        ]

    def model_curve_files(self, wildcards) -> list[str]:
        """Every model's curves on one corruption."""
        return [
            paths.fill(paths.MODEL_CURVES, model=m, corruption=wildcards.corruption)
            for m in self.models
        ]

    # ------------------------------------------------------------------ defenses

    def defense_models(self) -> list[str]:
        """Both models of every defense pair, in config order."""
        paired = set(self.defense_pairs) | set(self.defense_pairs.values())
        return [m for m in self.models if m in paired]

    def defense_predictions(self, wildcards=None) -> dict:
        """``{model: {corruption: [prediction files of its groups]}}`` of the paired models."""
        return {
            m: {
                c: [
                    paths.fill(paths.PREDICTIONS_GROUP, model=m, corruption=c, group=g)
                    for g in cfg.group_ids(self.config, c)
                ]
                for c in self.corruptions
            }
            for m in self.defense_models()
        }

    def defense_clean(self, wildcards=None) -> dict:
        return {m: paths.fill(paths.PREDICTIONS_CLEAN, model=m) for m in self.defense_models()}

    def defense_prediction_files(self, wildcards=None) -> list[str]:
        files = [f for groups in self.defense_predictions().values() for f in groups.values()]
        return [*self.defense_clean().values(), *(f for group in files for f in group)]

    def defense_replicate_files(self, wildcards=None) -> list[str]:
        return [
            paths.fill(paths.MODEL_REPLICATES, model=m, corruption=c)
            for m in self.defense_models()
            for c in self.corruptions
        ]

    def defense_labels(self, wildcards=None) -> dict:
        """``{defended model: its defense, e.g. "spatial_smoothing(window=3)"}``."""
        from vcrbench.defenses import get_defense

        return {m: get_defense(self.model_entries[m]["defense"]).label for m in self.defense_pairs}

    # ------------------------------------------------------------------ humans

    def human_reference(self, wildcards) -> dict:
        """Name, provenance and folder of the human reference of a corruption (None if it has
        none)."""
        name, how = self.human_references[wildcards.corruption]
        folder = paths.fill(paths.HUMAN_DIR, reference=name) if name else None
        return {"name": name, "how": how, "dir": folder}

    def reference_estimate_files(self, references: Sequence[str]) -> list[str]:
        return [f for r in references for f in paths.human_estimates(r)]

    def human_reference_files(self, wildcards) -> list[str]:
        """The estimate files of a corruption's human reference (none without one)."""
        name, _ = self.human_references[wildcards.corruption]
        return self.reference_estimate_files([name]) if name else []

    def reference_files(self, template: str, references: Sequence[str]) -> list[str]:
        return [paths.fill(template, reference=r) for r in references]

    def reference_entry(self, wildcards) -> dict:
        return canonical(self.config["humans"]["references"][wildcards.reference])

    def mapping_options(self, wildcards) -> dict:
        return canonical(humans.mapping_options(self.config, wildcards.reference))

    def reference_corruption_options(self, wildcards) -> dict:
        """Config options of the corruption a reference holds (only it: adding other corruptions
        does not redo the mapping)."""
        corruption = humans.reference_corruption_of(self.config, wildcards.reference)
        return canonical({corruption: self.config["corruptions"].get(corruption) or {}})

    # ------------------------------------------------------------------ retraining

    def pool_settings(self) -> dict:
        return canonical(rt.pool_settings(self.config))

    def trainset_n_samples(self, wildcards) -> int:
        return rt.trainset_n_samples(self.config, wildcards.run, wildcards.corruption)

    def trainset_seed(self, wildcards) -> int:
        return rt.trainset_seed(self.config, wildcards.run)

    def trainset_mode(self, wildcards) -> str:
        return rt.sampling_mode(self.config, wildcards.run)

    def trainset_files(self, wildcards) -> list[str]:
        return rt.trainset_files(self.config, wildcards.run)

    def base_weights(self, wildcards) -> list[str]:
        return cfg.model_weights(self.config, rt.base_name(self.config, wildcards.run))

    def base_entry(self, wildcards) -> dict:
        base = self.model_entries[rt.base_name(self.config, wildcards.run)]
        return canonical(cfg.model_settings(base))

    def derived_entry(self, wildcards) -> dict:
        return canonical(cfg.model_settings(self.model_entries[wildcards.run]))

    def run_settings(self, wildcards) -> dict:
        return canonical(rt.run_settings(self.config, wildcards.run))

    def checkpoint_dir(self, wildcards) -> str:
        return paths.fill(paths.CHECKPOINTS, run=wildcards.run)

    def training_logs(self, wildcards=None) -> list[str]:
        return [
            paths.fill(paths.TRAINING_LOG, run=run, ext=ext)
            for run in self.runs
            for ext in ("csv", "png")
        ]

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
        if self.zero_shot is not None:
            outputs += [paths.ZERO_SHOT_CLASSES, paths.ZERO_SHOT_TRANSITIONS]
        if self.defense_pairs:
            outputs.append(paths.DEFENSES_TABLE)
        if self.config["humans"]["conditions_table"]:
            outputs.append(paths.GEIRHOS_CONDITIONS)
        if self.config["humans"]["screening"]["path"] is not None:
            outputs.append(paths.SCREENING_TABLE)
        if self.geirhos_references and self.config["humans"]["trained_table"]:
            outputs.append(paths.GEIRHOS_TRAINED_TABLE)
            formats = self.figure_options["formats"]
            outputs += [paths.fill(paths.GEIRHOS_TRAINED_FIGURE, ext=f) for f in formats]
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
