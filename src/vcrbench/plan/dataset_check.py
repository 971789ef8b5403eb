"""The dataset checked before any job: every defect of its listing and every bad image file
(:mod:`vcrbench.datasets.listing`, :mod:`vcrbench.datasets.imagefiles`) named at once.

The workflow's ``onstart`` runs :func:`check_planned` after Snakemake has planned the jobs and
before it starts any: when the ``check_images`` job is among the jobs to run, the dataset is
checked there, in the main process, so a bad dataset stops the run before anything else starts
(ingesting human data, fetching weights …). The job ``check_images`` then makes its output (which
the clean set waits for) from the same check, which it finds done: :func:`check_dataset` records
a passed check in ``paths.CHECK_DATASET`` with what it checked (the dataset's config entry, and
each listed file's path, size and modification time), and a second call on an unchanged dataset
reads it back instead of opening every image again.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from vcrbench.datasets import imagefiles, loading
from vcrbench.errors import ConfigError, DatasetError, ModelConfigError
from vcrbench.files import io
from vcrbench.plan.config import canonical
from vcrbench.settings import DatasetSettings


def listing(ds: Mapping, problems: list):
    """The images the dataset's config entry selects, in the clean set's order (``image_id``,
    ``path``, ``label``; the listing's defects to ``problems``)."""
    return loading.selected_images(DatasetSettings.of_config(ds), problems)


def _listing(ds: Mapping, problems: list) -> list[str]:
    """The image files the dataset's config entry selects (its listing's defects to
    ``problems``)."""
    return listing(ds, problems)["path"].tolist()


def _fingerprint(ds: Mapping, files: Iterable[str]) -> str:
    """What a check depends on: the config entry and each file's path, size and mtime."""
    digest = hashlib.sha256(json.dumps(canonical(dict(ds)), default=str).encode())
    for f in [*([ds["labels"]] if ds.get("labels") else []), *files]:
        try:
            st = os.stat(f)
            digest.update(f"{f}\t{st.st_size}\t{st.st_mtime_ns}\n".encode())
        except OSError:
            digest.update(f"{f}\t-\n".encode())
    return digest.hexdigest()


def check_dataset(ds: Mapping, threads: int, record: str | Path, problems_file: str | Path) -> dict:
    """Check the dataset of config entry ``ds``: ``{"n_images", "bad": [{path, problem}]}``
    (``bad``: images ``on_error: skip`` leaves out). A defect of the listing, or a bad image under
    ``on_error: raise``, raises :class:`DatasetError` naming every problem (the first 20; all in
    ``problems_file``). A passed check is recorded in ``record`` and read back while nothing it
    depends on has changed."""
    listing: list[tuple[str, str]] = []
    files = _listing(ds, listing)
    key = _fingerprint(ds, files)
    if not listing:
        try:
            saved = json.loads(Path(record).read_text())
            if saved.get("fingerprint") == key:
                return saved["result"]
        except (OSError, ValueError, KeyError):
            pass
    bad = imagefiles.check_images(files, threads=threads)
    stop = listing + (bad if ds["on_error"] == "raise" else [])
    imagefiles.write_problems(stop, problems_file)
    if stop:
        raise DatasetError(imagefiles.describe(stop, len(files), problems_file))
    result = {"n_images": len(files), "bad": [{"path": p, "problem": w} for p, w in bad]}
    io.write_json({"fingerprint": key, "result": result}, record)
    return result


def check_planned(jobs, ds: Mapping, record: str | Path, problems_file: str | Path) -> dict | None:
    """What the workflow's ``onstart`` runs: :func:`check_dataset` (with the check job's 8
    threads, at most one per core) when the ``check_images`` job is among the planned ``jobs``
    (the jobs to run, :class:`~vcrbench.plan.snakemake_compat.PlannedJob`), else nothing (None). A
    dataset at fault raises :class:`DatasetError` saying that no job was started."""
    if not any(job.rule == "check_images" for job in jobs):
        return None
    try:
        return check_dataset(ds, min(8, os.cpu_count() or 1), record, problems_file)
    except DatasetError as exc:
        raise DatasetError(f"{exc}.{NO_JOB}") from None


#: How a check run before any job ends its message (:func:`check_planned`, and the model check's).
NO_JOB = " No job was started."


def run_all(*checks):
    """Run every check of the run's start (callables), each even when one before it failed, and
    return their results; a failed check raises its error, several a :class:`DatasetError`
    naming each failure, one a paragraph, so one run names the dataset's, the models' and the
    label spaces' problems."""
    results, failures = [], []
    for check in checks:
        try:
            results.append(check())
        except (DatasetError, ModelConfigError, ConfigError) as exc:
            results.append(None)
            failures.append(exc)
    if len(failures) == 1:
        raise failures[0]
    if failures:
        texts = [str(exc).removesuffix(NO_JOB) for exc in failures]
        raise DatasetError(f"{len(texts)} checks failed:\n" + "\n".join(texts) + NO_JOB)
    return results
