"""What stage I (rules/generate.smk) and the inference jobs' inputs ask of the plan: the shard
files of every test set and ImageNet-C set, their groups, and each corruption's settings.

A facet of :class:`vcrbench.plan.rules.Plan`: it reads ``self.config`` and the lists that
``Plan.__init__`` sets (corruptions, models, references, runs, …).
"""

from __future__ import annotations

import functools

from vcrbench.plan import config as cfg
from vcrbench.plan import paths
from vcrbench.plan.config import canonical


class TestSetRules:
    """Test sets and ImageNet-C sets: shards, groups of shards, per-corruption settings."""

    def shard_ids(self, corruption: str) -> list[str]:
        return cfg.shard_ids(self.config, corruption)

    def group_shard_files(self, wildcards) -> list[str]:
        """The shards that one inference job (a group) reads."""
        shards = cfg.group_shards(self.config, wildcards.corruption, wildcards.group)
        return [paths.fill(paths.SHARD, corruption=wildcards.corruption, shard=s) for s in shards]

    def corruption_shard_files(self, wildcards) -> list[str]:
        """Every shard of one corruption's test set."""
        c = wildcards.corruption
        return [paths.fill(paths.SHARD, corruption=c, shard=s) for s in self.shard_ids(c)]

    def stratified_manifest_files(self, wildcards=None) -> list[str]:
        """The manifests whose first N candidates' Δv give the parameter-uniform coverage of a
        Δv-stratified set (none in other modes)."""
        if self.config["sampling"]["mode"] != "dv-stratified":
            return []
        return [paths.fill(paths.MANIFEST, corruption=c) for c in self.corruptions]

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
