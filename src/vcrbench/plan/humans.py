"""The ``humans`` block: which human reference each corruption uses, which references a run needs,
and the settings of each reference's stages. Defaults come from the schema (the shipped Geirhos et
al. 2018 noise and low-pass references); the resolution rules are
:mod:`vcrbench.humans.transfer`'s (own data, else a member of the similarity class).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from vcrbench.errors import ConfigError, HumanDataError, HumanReferenceError
from vcrbench.humans.transfer import declared_classes, reference_corruption, resolve_all


def mapping_options(config: Mapping, reference: str) -> dict:
    """The Δv-mapping settings of one reference: ``humans.mapping``, overridden by the
    reference's own ``mapping`` entry (e.g. ``jpeg_quality: 75`` for the JPEG noise stimuli)."""
    humans = config["humans"]
    if reference not in humans["references"]:
        raise HumanDataError(f"config key 'humans.references': no reference {reference!r}")
    return {**humans["mapping"], **(humans["references"][reference].get("mapping") or {})}


def human_references(config: Mapping) -> dict[str, tuple[str | None, str | None]]:
    """``{corruption: (reference, how)}`` for every configured corruption (None: no reference)."""
    humans = config["humans"]
    corruptions = list(config["corruptions"])
    return resolve_all(corruptions, humans["references"], humans["assign"], config["corruptions"])


def geirhos_references(config: Mapping) -> list[str]:
    """The ``geirhos2018`` references, when the DNN table is asked for (else none)."""
    humans = config["humans"]
    if not humans["dnn_table"]:
        return []
    return sorted(n for n, r in humans["references"].items() if r.get("kind") == "geirhos2018")


def references_in_use(config: Mapping) -> list[str]:
    """Human references the run needs: those of configured corruptions, plus the Geirhos ones
    when the DNN table is requested."""
    used = {ref for ref, _ in human_references(config).values() if ref}
    return sorted(used | set(geirhos_references(config)))


def reference_corruption_of(config: Mapping, reference: str) -> str:
    """The corruption whose trials ``reference`` holds."""
    return reference_corruption(reference, config["humans"]["references"][reference])


def reference_info(config: Mapping) -> dict[str, dict]:
    """``{reference: {"corruption", "similarity_class"}}`` of the references a run uses (the
    similarity figure groups their curves by class)."""
    classes = declared_classes(config["corruptions"])
    out = {}
    for name in references_in_use(config):
        corruption = reference_corruption_of(config, name)
        out[name] = {"corruption": corruption, "similarity_class": classes.get(corruption)}
    return out


def check(config: Mapping) -> None:
    """References, assignments and trial files that cannot be used; the message names the key."""
    try:
        for name, ref in config["humans"]["references"].items():
            reference_corruption(name, ref)
            if ref.get("kind") == "trials" and not Path(ref["path"]).is_file():
                raise ConfigError(
                    f"config key 'humans.references.{name}.path': file {ref['path']} does not exist"
                )
        human_references(config)
        screening = config["humans"]["screening"]
        if screening["path"] is not None and not Path(screening["path"]).is_file():
            raise ConfigError(
                f"config key 'humans.screening.path': file {screening['path']} does not exist"
            )
    except (HumanReferenceError, HumanDataError) as exc:
        msg = str(exc)
        raise ConfigError(
            msg if msg.startswith("config key") else f"config key 'humans': {msg}"
        ) from exc
