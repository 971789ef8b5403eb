"""The ``humans`` block: each reference's entry read into a typed
:class:`~vcrbench.humans.references.HumanReference` (:func:`reference_of`), which human reference
each corruption uses, which references a run needs, and the settings of each reference's stages.
Defaults come from the schema (the shipped Geirhos et al. 2018 references); the resolution rules
are :mod:`vcrbench.humans.transfer`'s (own data, else a member of the similarity class).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from vcrbench.errors import ConfigError, HumanDataError, HumanReferenceError
from vcrbench.humans.geirhos.reader import EXPERIMENTS, NOT_PLACEABLE
from vcrbench.humans.references import GEIRHOS2018, REFERENCE_KINDS, TRIALS, HumanReference
from vcrbench.humans.transfer import declared_classes, resolve_all


def reference_of(name: str, entry: Mapping) -> HumanReference:
    """The reference of entry ``humans.references.<name>``.

    Its corruption: for ``kind: geirhos2018`` the entry's ``corruption``, else the experiment's
    manipulation (``uniform_noise``, ``geirhos_lowpass``, ``geirhos_contrast``, …); for
    ``kind: trials`` required, with ``path``. Rotation and eidolon cannot be placed on the Δv axis:
    asking for them raises, saying why; every error names the config key.
    """
    key = f"humans.references.{name}"
    if not isinstance(entry, Mapping):
        raise HumanReferenceError(f"config key '{key}': must be a mapping, got {entry!r}")
    kind = entry.get("kind")
    if kind not in REFERENCE_KINDS:
        raise HumanReferenceError(
            f"config key '{key}.kind': {kind!r} is not one of {', '.join(REFERENCE_KINDS)}"
        )
    if kind == GEIRHOS2018:
        exp = entry.get("experiment")
        if exp in NOT_PLACEABLE:
            raise HumanReferenceError(
                f"config key '{key}.experiment': Geirhos experiment {exp!r} cannot be a human "
                f"reference on the Δv axis: {NOT_PLACEABLE[exp]}"
            )
        if exp not in EXPERIMENTS:
            raise HumanReferenceError(
                f"config key '{key}.experiment': {exp!r} is not one of {', '.join(EXPERIMENTS)}"
            )
        corruption = str(entry.get("corruption") or EXPERIMENTS[exp].corruption)
        return HumanReference(name, kind, corruption, exp, entry.get("root"), None, entry)
    corruption = entry.get("corruption")
    if not corruption:
        raise HumanReferenceError(
            f"config key '{key}.corruption': required for kind '{TRIALS}' (the corruption the "
            "participants saw)"
        )
    if not entry.get("path"):
        raise HumanReferenceError(f"config key '{key}.path': required for kind '{TRIALS}'")
    return HumanReference(name, kind, str(corruption), None, None, str(entry["path"]), entry)


def references_of(entries: Mapping[str, Mapping]) -> dict[str, HumanReference]:
    """:func:`reference_of` of every entry of ``humans.references`` (``{name: entry}``)."""
    return {name: reference_of(name, entry) for name, entry in entries.items()}


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
    held = {n: r.corruption for n, r in references_of(humans["references"]).items()}
    return resolve_all(corruptions, held, humans["assign"], config["corruptions"])


def geirhos_references(config: Mapping) -> list[str]:
    """The ``geirhos2018`` references, when the DNN table is asked for (else none)."""
    humans = config["humans"]
    if not humans["dnn_table"]:
        return []
    return sorted(n for n, r in humans["references"].items() if r.get("kind") == GEIRHOS2018)


def references_in_use(config: Mapping) -> list[str]:
    """Human references the run needs: those of configured corruptions, plus the Geirhos ones
    when the DNN table is requested."""
    used = {ref for ref, _ in human_references(config).values() if ref}
    return sorted(used | set(geirhos_references(config)))


def reference_corruption_of(config: Mapping, reference: str) -> str:
    """The corruption whose trials ``reference`` holds."""
    return reference_of(reference, config["humans"]["references"][reference]).corruption


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
        for name, ref in references_of(config["humans"]["references"]).items():
            if ref.kind == TRIALS and not Path(ref.path).is_file():
                raise ConfigError(
                    f"config key 'humans.references.{name}.path': file {ref.path} does not exist"
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
