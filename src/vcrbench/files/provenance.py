"""What made an output: the code, the software, and (inside a workflow job) the job's settings.

:func:`record` is the provenance record every output carries: Parquet files in their key-value
metadata (:data:`PARQUET_KEY`, written by :func:`vcrbench.files.io.write_parquet`), and every output
of a workflow job in a JSON sidecar under ``results/provenance/`` (:mod:`vcrbench.plan.job`). It
holds

- ``vcrbench``: the library's version; ``git_commit``: the commit of the checkout the library was
  imported from (None when it is not a git checkout, or git is missing), ``git_dirty``: whether
  tracked files differ from that commit (None without a commit);
- ``python`` and ``packages``: the versions of the packages that shape results (:data:`PACKAGES`;
  None for one that is not installed), read from the installed distributions (nothing imported);
- ``rule``, ``stage_version`` and ``config_hash`` of the workflow job that wrote the output (None
  outside a job): the hash is of the job's params, the config entries the job depends on
  (:func:`config_hash`).

There are no timestamps or host names, so the same config, seed and code still give
byte-identical outputs. The software part is computed once per process.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import json
import platform
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

from vcrbench import __version__

#: Parquet key-value metadata key of the provenance record.
PARQUET_KEY = b"vcrbench.provenance"
#: The packages whose versions a record lists (what computes, reads or writes results).
PACKAGES = (
    "numpy",
    "pandas",
    "pyarrow",
    "scipy",
    "torch",
    "torchvision",
    "timm",
    "matplotlib",
    "snakemake",
)

#: The job running in this process (:func:`job`): rule, stage version, config hash.
_JOB: dict = {"rule": None, "stage_version": None, "config_hash": None}


def _git(args: list[str], where: Path) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(where), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_state(where: str | Path | None = None) -> tuple[str | None, bool | None]:
    """``(commit, dirty)`` of the git checkout holding the package ``where`` is in (this library's
    by default); ``(None, None)`` when the package's files are not tracked by git (an installed
    copy, even one inside another repository's ignored folder) or git is not installed."""
    where = Path(where) if where is not None else Path(__file__).resolve().parent
    if _git(["ls-files", "--error-unmatch", "--", "__init__.py"], where) is None:
        return None, None
    commit = _git(["rev-parse", "HEAD"], where)
    if not commit:
        return None, None
    status = _git(["status", "--porcelain", "--untracked-files=no"], where)
    return commit, (bool(status) if status is not None else None)


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


@functools.cache
def software() -> dict:
    """The code and software part of a record (computed once per process)."""
    commit, dirty = git_state()
    return {
        "vcrbench": __version__,
        "git_commit": commit,
        "git_dirty": dirty,
        "python": platform.python_version(),
        "packages": {name: _version(name) for name in PACKAGES},
    }


def config_hash(params: Mapping) -> str:
    """``sha256:<hex>`` of ``params`` as canonical JSON (keys sorted at every level).

    In the workflow ``params`` are a job's params: the config entries it depends on and its stage
    version, exactly what Snakemake compares to decide a rerun, so the hash changes when and only
    when a config change reruns the job (a change elsewhere in the config leaves it alone).
    """
    text = json.dumps(dict(params), sort_keys=True, default=str, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@contextlib.contextmanager
def job(rule: str, stage_version: int | None, params: Mapping) -> Iterator[dict]:
    """Record, for the outputs written in the block, that workflow rule ``rule`` (stage version
    ``stage_version``, params ``params``) made them. Yields the job part of the record."""
    before = dict(_JOB)
    _JOB.update(rule=rule, stage_version=stage_version, config_hash=config_hash(params))
    try:
        yield dict(_JOB)
    finally:
        _JOB.update(before)


def record() -> dict:
    """The provenance record of an output written now (see the module's docstring)."""
    return {**software(), **_JOB}


def encode(rec: Mapping | None = None) -> bytes:
    """A record as the canonical JSON stored in files (the current :func:`record` by default)."""
    return json.dumps(record() if rec is None else dict(rec), sort_keys=True, default=str).encode()
