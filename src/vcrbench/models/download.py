"""Downloading a ``checkpoint`` file from its entry's ``url``: :func:`download_checkpoint`.

A model entry that names a weights file (``checkpoint:``) and an http(s) ``url:`` is fetched by
the workflow's ``fetch_weights`` rule when the file is not there yet (:mod:`vcrbench.models.fetch`):

- a Google Drive link (``drive.google.com``, ``docs.google.com``) through ``gdown``, which follows
  Drive's "cannot scan this file for viruses" confirm page of large files;
- any other http(s) URL (a GitHub release file, a lab's server) as a streamed ``requests`` GET.

Either way the bytes go to a temporary file beside the checkpoint
(:func:`vcrbench.files.io.atomic_path`) that is renamed to it only when the download is complete and
its sha256 is the one the entry gives (``sha256:``, optional); a download that fails, is cut short
or has another sha256 leaves no file behind, so the next run starts it again. A progress bar goes to
standard error (the job's log).
"""

from __future__ import annotations

import hashlib
import os
import urllib.parse
from pathlib import Path

from vcrbench.errors import WeightsUnavailableError
from vcrbench.files import io

#: Hosts whose links go through gdown (its own test: ``gdown.parse_url.is_google_drive_url``).
DRIVE_HOSTS = ("drive.google.com", "docs.google.com")
#: Seconds to wait for a server to connect, and between two reads of the body.
TIMEOUT = (30, 120)
CHUNK = 1 << 20


def downloadable(url: str | None) -> bool:
    """Whether ``url`` is one :func:`download_checkpoint` fetches (an http or https address)."""
    return bool(url) and urllib.parse.urlparse(url).scheme in ("http", "https")


def is_drive(url: str) -> bool:
    return urllib.parse.urlparse(url).hostname in DRIVE_HOSTS


def download_checkpoint(
    model: str, url: str, path: str | os.PathLike, sha256: str | None = None, progress: bool = True
) -> str:
    """Download ``url`` into ``path`` (atomically, see the module docstring) for model ``model``;
    returns the file's ``sha256:<hex>``. Raises :class:`~vcrbench.errors.WeightsUnavailableError`
    naming the model and the URL when the download fails or its sha256 is not ``sha256``."""
    path = Path(path)
    digest = hashlib.sha256()
    try:
        with io.atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                if is_drive(url):
                    _gdown(url, fh, digest, progress)
                else:
                    _stream(url, fh, digest, progress)
            got = digest.hexdigest()
            check_sha256(model, url, path, sha256, got)
    except WeightsUnavailableError:
        raise
    except Exception as exc:
        raise WeightsUnavailableError(
            f"model {model!r}: downloading {url} into {path} failed "
            f"({type(exc).__name__}: {str(exc).strip()[:500]}); no file was left. Run the "
            f"workflow again where this URL can be reached, or download it by hand to {path}"
        ) from exc
    return "sha256:" + got


def check_sha256(model: str, url: str | None, path: Path, expected: str | None, got: str) -> None:
    """Raise :class:`~vcrbench.errors.WeightsUnavailableError` naming both hashes when the entry
    gives a sha256 (``expected``, hex) and the file's (``got``, hex) is another."""
    if expected is not None and expected.lower() != got:
        source = f" downloaded from {url}" if url else ""
        raise WeightsUnavailableError(
            f"model {model!r}: the weights file {path}{source} has sha256 {got}, but the "
            f"entry's sha256 is {expected.lower()}; the file is not the one the entry names "
            "(a changed or damaged file, or a wrong url or sha256 in the entry)"
        )


def _stream(url: str, fh, digest, progress: bool) -> None:
    """A plain http(s) download, streamed in chunks; a body shorter than its Content-Length is
    an error."""
    import requests
    from tqdm import tqdm

    with requests.get(url, stream=True, timeout=TIMEOUT) as res:
        res.raise_for_status()
        length = res.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        received = 0
        name = Path(urllib.parse.urlparse(url).path).name
        with tqdm(total=total, unit="B", unit_scale=True, desc=name, disable=not progress) as bar:
            for chunk in res.iter_content(chunk_size=CHUNK):
                fh.write(chunk)
                digest.update(chunk)
                received += len(chunk)
                bar.update(len(chunk))
    if total is not None and received != total:
        raise OSError(f"the server sent {received} of the {total} bytes it announced")


def _gdown(url: str, fh, digest, progress: bool) -> None:
    """A Google Drive link through gdown (its confirm page of large files followed), written to
    the open file ``fh``: gdown keeps no partial file of its own and stores no cookies."""
    import gdown

    gdown.download(url, fh, quiet=not progress, use_cookies=False, hasher=digest)
