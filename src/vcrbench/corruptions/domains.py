"""The named domain sets of the built-in corruptions: ``calibrated`` (the project's, the default)
and ``paper`` (its authors' toolbox ranges), one YAML file each in ``vcrbench/data``
(docs/corruptions.md)."""

from __future__ import annotations

import importlib.resources
from functools import lru_cache
from typing import TYPE_CHECKING

from vcrbench.errors import CorruptionError, did_you_mean
from vcrbench.schema import load_yaml
from vcrbench.vocab import DEFAULT_DOMAIN_SET

if TYPE_CHECKING:
    from vcrbench.corruptions.registry import Corruption

DOMAINS_FILE = "corruption_domains.yaml"
#: The named domain sets and their files.
DOMAIN_SETS = {"calibrated": DOMAINS_FILE, "paper": "corruption_domains_paper.yaml"}


@lru_cache(maxsize=len(DOMAIN_SETS))
def domain_set(name: str) -> dict[str, dict]:
    """The entries of a named domain set (``calibrated`` or ``paper``), corruption -> entry."""
    if name not in DOMAIN_SETS:
        raise CorruptionError(
            f"unknown domain set {name!r}{did_you_mean(name, DOMAIN_SETS)}; "
            f"known: {', '.join(DOMAIN_SETS)}"
        )
    text = (importlib.resources.files("vcrbench") / "data" / DOMAIN_SETS[name]).read_text()
    return load_yaml(text) or {}


def calibrated_domains() -> dict[str, dict]:
    """The calibrated domains of the built-ins (``vcrbench/data/corruption_domains.yaml``)."""
    return domain_set(DEFAULT_DOMAIN_SET)


def with_domain_set(corruption: Corruption, name: str) -> Corruption:
    """``corruption`` with its domain from the named set (unchanged where the set lacks it).

    An entry's ``variants: {variant: {domain: ..., chosen: ...}}`` overrides parameters' domains
    for a corruption of that variant (the toolbox's defocus blur: alias σ from 0).
    """
    entry = domain_set(name).get(corruption.name)
    if name == DEFAULT_DOMAIN_SET or entry is None:
        return corruption
    reason = f"domain set {name!r}: {entry['source']}; {entry['chosen']}"
    variant = (entry.get("variants") or {}).get(corruption.variant) if corruption.variant else None
    if variant is None:
        return corruption.with_domain(entry["domain"], reason)
    domain = {**entry["domain"], **variant["domain"]}
    return corruption.with_domain(
        domain, f"{reason}; variant {corruption.variant!r}: {variant['chosen']}"
    )
