"""What the retraining rules (rules/retrain.smk) ask of the plan: the pool, each run's training
set and settings, its base and fine-tuned model.

A facet of :class:`vcrbench.plan.rules.Plan`: it reads ``self.config`` and the lists that
``Plan.__init__`` sets (corruptions, models, references, runs, …).
"""

from __future__ import annotations

from vcrbench.plan import config as cfg
from vcrbench.plan import paths
from vcrbench.plan import retrain as rt
from vcrbench.plan.config import canonical


class RetrainRules:
    """Retraining runs: pool, training sets, base and fine-tuned models."""

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
