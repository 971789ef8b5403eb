"""Logging for workflow jobs: everything a job prints goes to its Snakemake log file."""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

#: A job's log line.
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


@contextlib.contextmanager
def job_log(path: str | os.PathLike | None) -> Iterator[logging.Logger]:
    """Route logging (at ``INFO``), stdout and stderr (progress bars included) to ``path`` for the
    block.

    Exceptions are logged with their traceback before they propagate, so the log of a failed job
    says why it failed (Snakemake shows it with ``--show-failed-logs``).
    """
    if path is None:
        logging.basicConfig(level=logging.INFO, format=_FORMAT)
        yield logging.getLogger("vcrbench")
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", buffering=1) as fh:
        handler = logging.StreamHandler(fh)
        handler.setFormatter(logging.Formatter(_FORMAT))
        root = logging.getLogger()
        old_level = root.level
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        logger = logging.getLogger("vcrbench")
        try:
            with contextlib.redirect_stdout(fh), contextlib.redirect_stderr(fh):
                try:
                    yield logger
                except BaseException:
                    logger.exception("job failed")
                    raise
        finally:
            root.removeHandler(handler)
            root.setLevel(old_level)


def set_threads(n: int) -> None:
    """Limit torch's and BLAS's CPU threads to what the job was given."""
    n = max(1, int(n))
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, str(n))
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)
    elif _importable("torch"):
        # Importing torch takes seconds and most jobs never use it: set its threads as soon as
        # something imports it (before any of its work), not by importing it here.
        _after_import("torch", lambda torch: torch.set_num_threads(n))


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs ``then(module)`` once module ``name`` is imported (as the import's last step)."""

    def __init__(self, name: str, then) -> None:
        self.name, self.then = name, then

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)  # by the finders after this one
        if spec is not None and spec.loader is not None:
            exec_module = spec.loader.exec_module

            def run(module):
                exec_module(module)
                self.then(module)

            spec.loader.exec_module = run
        return spec


def _after_import(name: str, then) -> None:
    """:class:`_AfterImport` of ``name``, replacing any still waiting (the last call wins)."""
    sys.meta_path[:] = [
        f for f in sys.meta_path if not (isinstance(f, _AfterImport) and f.name == name)
    ]
    sys.meta_path.insert(0, _AfterImport(name, then))


def _importable(name: str) -> bool:
    return importlib.util.find_spec(name) is not None
