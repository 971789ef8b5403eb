"""What inference and estimation (rules/infer.smk, rules/estimate.smk) ask of the plan: each
model's entry and weights, the prediction files, the estimate files, and the defense pairs.

A facet of :class:`vcrbench.plan.rules.Plan`: it reads ``self.config`` and the lists that
``Plan.__init__`` sets (corruptions, models, references, runs, …).
"""

from __future__ import annotations

from vcrbench.plan import config as cfg
from vcrbench.plan import paths
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
