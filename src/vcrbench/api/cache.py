"""Where :func:`vcrbench.benchmark` keeps the test sets it generates, for the next call."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from vcrbench.errors import ConfigError

#: The folder under the user's cache (``$XDG_CACHE_HOME``, else ``~/.cache``).
CACHE_NAME = "vcrbench"


def default_cache() -> Path:
    """``$XDG_CACHE_HOME/vcrbench``, else ``~/.cache/vcrbench`` (the XDG base directory rule)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / CACHE_NAME


def cache_folder(path: str | os.PathLike | None = None) -> Path:
    """The cache folder (``path``, else :func:`default_cache`), created and checked writable: a
    read-only one (a cluster's $HOME on a compute node) is an error that says what to pass."""
    folder = Path(path) if path is not None else default_cache()
    how = (
        "cache_dir= (--cache-dir)"
        if path is not None
        else ("cache_dir= (--cache-dir) a writable folder, or set XDG_CACHE_HOME")
    )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise ConfigError(
            f"cache folder {folder} cannot be written ({exc.strerror or exc}): the test sets "
            f"are kept there for the next call; pass {how}"
        ) from None
    return folder.absolute()
