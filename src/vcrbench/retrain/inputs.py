"""The input, param and resource functions of ``rules/retrain.smk``.

Snakemake calls each with a job's ``wildcards`` (``run``, ``corruption``); they only look things up
in the config (:mod:`vcrbench.retrain.settings`); config entries come with their keys sorted
(:func:`vcrbench.config.canonical`: Snakemake compares params by their text, so reordered keys
must not rerun anything). They live here rather than in the rules file so
that the rules file holds rules only (``snakemake --lint``) and they are tested like the library.
"""

from __future__ import annotations

from collections.abc import Mapping

from vcrbench.config import canonical
from vcrbench.retrain import settings as rs


class RuleInputs:
    """Functions of one config's retraining rules (``RuleInputs(config).shard_files`` …)."""

    def __init__(self, config: Mapping) -> None:
        self.config = config

    def n_samples(self, wildcards) -> int:
        """Training images of one corruption of one run."""
        return rs.trainset_n_samples(self.config, wildcards.run, wildcards.corruption)

    def seed(self, wildcards) -> int:
        return rs.trainset_seed(self.config, wildcards.run)

    def mode(self, wildcards) -> str:
        return rs.sampling_mode(self.config, wildcards.run)

    def shard_files(self, wildcards) -> list[str]:
        """Every training shard of one run."""
        return rs.trainset_files(self.config, wildcards.run)

    def base_weights(self, wildcards) -> list[str]:
        """The base model's weights file, if it has one (a change reruns the fine-tuning)."""
        from vcrbench.config import model_weights

        return model_weights(self.config, rs.base_name(self.config, wildcards.run))

    def base_entry(self, wildcards) -> dict:
        return canonical(self.config["models"][rs.base_name(self.config, wildcards.run)])

    def derived_entry(self, wildcards) -> dict:
        return canonical(rs.derived_model_entries(self.config)[wildcards.run])

    def run(self, wildcards) -> dict:
        return canonical(rs.run_settings(self.config, wildcards.run))

    def pool(self) -> dict:
        """The pool's settings (a plain value: one pool per config)."""
        return canonical(rs.pool_settings(self.config))

    def mem_mb(self, wildcards) -> int:
        return rs.finetune_mem_mb(self.config, wildcards.run)
