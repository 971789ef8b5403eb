"""What the human-reference rules (rules/humans.smk) and the rules that read a human estimate ask
of the plan: each reference's entry, files and settings, and the reference of each corruption.

A facet of :class:`vcrbench.plan.rules.Plan`: it reads ``self.config`` and the lists that
``Plan.__init__`` sets (corruptions, models, references, runs, …).
"""

from __future__ import annotations

from collections.abc import Sequence

from vcrbench.plan import humans, paths
from vcrbench.plan.config import canonical


class HumanRules:
    """Human references: entries, files, settings."""

    @property
    def geirhos_reference_entries(self) -> dict:
        """The config entries of the Geirhos references in use, ``{reference: entry}``."""
        entries = self.config["humans"]["references"]
        return {r: entries[r] for r in self.geirhos_references}

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
