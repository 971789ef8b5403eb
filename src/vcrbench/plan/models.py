"""Model entries as a config writes them: ``base`` (a model that starts from another model's entry)
and the defended models with the undefended model each is compared with (docs/defenses.md).

``{base: m, <key>: <value>, ...}`` is the entry of the configured model ``m`` with those keys
replaced, so that one line adds a variant of a model: ``m_smooth: {base: m, defense:
spatial_smoothing}``. The expanded entry is what every rule sees: nothing downstream knows that
it was written with ``base``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from vcrbench.errors import ConfigError, did_you_mean
from vcrbench.vocab import MODEL_DESCRIPTION_KEYS

#: Keys that do not change a model's predictions: two entries that differ only in these (and in
#: ``defense``) are the same network on the same inputs.
DESCRIPTIVE_KEYS = ("family", "notes", "url", *MODEL_DESCRIPTION_KEYS)


def expand_bases(models: Mapping[str, Mapping]) -> dict[str, dict]:
    """``models`` with every ``base`` replaced by a copy of that model's entry (keys given win).

    Raises :class:`~vcrbench.errors.ConfigError` naming ``models.<name>.base`` when the base is
    not a configured model, is the model itself, or has a ``base`` of its own.
    """
    out = {}
    for name, entry in models.items():
        entry = dict(entry or {})
        if "base" in entry:
            base = entry.pop("base")
            key = f"config key 'models.{name}.base'"
            if base == name:
                raise ConfigError(f"{key}: a model cannot be its own base")
            if base not in models:
                raise ConfigError(
                    f"{key}: {base!r} is not a configured model"
                    f"{did_you_mean(str(base), models)}; configured: {', '.join(models)}"
                )
            base_entry = dict(models[base] or {})
            if "base" in base_entry:
                raise ConfigError(
                    f"{key}: model {base!r} has a base of its own ({base_entry['base']!r}); "
                    "name a model with a full entry"
                )
            merged = copy.deepcopy(base_entry)
            merged.update(copy.deepcopy(entry))
            entry = merged
        out[name] = entry
    return out


def training_method(entry: Mapping) -> str:
    """What Table 1 says of how a model was trained: the entry's ``training``; without one,
    ``Supervised`` when its ``family`` is ``supervised`` (the one family that says how the
    weights were trained: the others are colour groups of an architecture or a source), else
    ``""`` (not known)."""
    if entry.get("training"):
        return str(entry["training"])
    return SUPERVISED if entry.get("family") == "supervised" else ""


#: Table 1's word for supervised training (the paper's).
SUPERVISED = "Supervised"


def _network(entry: Mapping) -> dict:
    return {k: v for k, v in entry.items() if k not in (*DESCRIPTIVE_KEYS, "defense")}


def defense_pairs(entries: Mapping[str, Mapping]) -> dict[str, str]:
    """``{defended model: undefended model}``: each model with a ``defense`` and the first model
    without one whose entry is the same but for the defense and the descriptive keys
    (:data:`DESCRIPTIVE_KEYS`). A defended model without such a twin (its entry also changes,
    say, the precision) has no pair: its comparison would not be the defense's alone."""
    plain = [(name, _network(e)) for name, e in entries.items() if e.get("defense") is None]
    out = {}
    for name, entry in entries.items():
        if entry.get("defense") is None:
            continue
        twin = next((p for p, net in plain if net == _network(entry)), None)
        if twin is not None:
            out[name] = twin
    return out
