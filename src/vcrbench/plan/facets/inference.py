"""What inference and estimation (rules/infer.smk, rules/estimate.smk) ask of the plan: each
model's entry and weights, the prediction files, the estimate files, and the defense pairs.

A facet of :class:`vcrbench.plan.rules.Plan`: it reads ``self.config`` and the lists that
``Plan.__init__`` sets (corruptions, models, references, runs, …).
"""

from __future__ import annotations

from types import SimpleNamespace

from vcrbench.plan import config as cfg
from vcrbench.plan import paths, work
from vcrbench.plan.config import canonical


class InferenceRules:
    """Models, their predictions and estimates, and the defended models' pairs."""

    # ------------------------------------------------------------------ models and predictions

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
        return [f for model in self.models for f in self._model_predictions(model)]

    def _model_predictions(self, model: str) -> list[str]:
        """One model's prediction files: the clean set's, then each test set's groups, then
        each ImageNet-C set's."""
        sets = [out for out, _ in self._model_sets(model)]
        return [paths.fill(paths.PREDICTIONS_CLEAN, model=model), *sets]

    def _model_sets(self, model: str) -> list[tuple[str, list[str]]]:
        """``(prediction file, the shards it is predicted from)`` of every group of every test
        set, then of every ImageNet-C set, of ``model``."""
        sets = []
        for c in self.corruptions:
            for g in cfg.group_ids(self.config, c):
                out = paths.fill(paths.PREDICTIONS_GROUP, model=model, corruption=c, group=g)
                sets.append((out, self.group_shard_files(SimpleNamespace(corruption=c, group=g))))
        for c in self.imagenet_c:
            for g in self.imagenet_c_group_ids(c):
                out = paths.fill(paths.PREDICTIONS_IMAGENET_C, model=model, corruption=c, group=g)
                shards = self.imagenet_c_group_shard_files(SimpleNamespace(corruption=c, group=g))
                sets.append((out, shards))
        return sets

    def _imagenet_c_predictions(self, model: str) -> list[str]:
        return [
            paths.fill(paths.PREDICTIONS_IMAGENET_C, model=model, corruption=c, group=g)
            for c in self.imagenet_c
            for g in self.imagenet_c_group_ids(c)
        ]

    # ------------------------------------------------------------------ one job per model

    @property
    def inference_per_model(self) -> bool:
        """Whether each model is predicted in one job (rule ``predict_model``), not one job per
        set and group (:func:`vcrbench.plan.work.inference_per_model`)."""
        return work.inference_per_model(self.config, self.clean_images)

    def model_job_outputs(self) -> list[str]:
        """The outputs of rule ``predict_model``, ``{model}`` left a wildcard: every prediction
        file of one model, in :meth:`_model_predictions`' order."""
        return self._model_predictions("{model}")

    def model_job_inputs(self, wildcards) -> dict[str, str | list[str]]:
        """The named inputs of one ``predict_model`` job: the clean set (``images``, ``index``),
        the model's ``weights``, and ``shards_<i>``, the shards that its output ``i`` is
        predicted from (output 0, the clean set's predictions, is predicted from the clean
        set)."""
        inputs = {
            "images": paths.CLEAN_IMAGES,
            "index": paths.CLEAN_INDEX,
            "weights": self.model_weights(wildcards),
        }
        for i, (_, shards) in enumerate(self._model_sets(wildcards.model), start=1):
            inputs[f"shards_{i}"] = shards
        return inputs

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
