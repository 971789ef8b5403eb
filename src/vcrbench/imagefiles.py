"""Every image file of a dataset checked before any work: :func:`check_images`.

The workflow's ``check_images`` job runs it on every image of the dataset, in parallel, and names
every bad file at once with what is wrong with it (an empty file, a file that is not an image, a
truncated JPEG, one that does not decode), with the defects of the dataset's listing (a missing
file, an unknown label, a duplicate row: :mod:`vcrbench.listing`), in one message
(:func:`describe`; the full list in a file, :func:`write_problems`), before any other job. It is cheap where files are
sound: a file is opened (its header read), its format's integrity check run (``verify``: chunk CRCs
for PNG), and a JPEG is fully decoded only when it does not end with the end-of-image marker.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from vcrbench import io

#: JPEG's end-of-image marker, which a complete file ends with (up to a few padding bytes).
JPEG_EOI = b"\xff\xd9"
_TAIL = 64


def _decodes(path: Path) -> str | None:
    try:
        with Image.open(path) as im:
            im.load()
    except Exception as exc:  # noqa: BLE001 - any decoder failure is the finding
        return f"does not decode ({type(exc).__name__}: {exc})"
    return None


def image_problem(path: str | os.PathLike) -> str | None:
    """What is wrong with an image file (None: nothing found)."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if size == 0:
        return "empty file (0 bytes)"
    try:
        with Image.open(path) as im:
            fmt = im.format
            im.verify()
    except UnidentifiedImageError:
        with open(path, "rb") as fh:
            head = fh.read(16)
        return f"not an image ({size} bytes, starting {head!r})"
    except Exception as exc:  # noqa: BLE001 - verify's failures are the finding
        return f"damaged ({type(exc).__name__}: {exc})"
    if fmt == "JPEG":
        with open(path, "rb") as fh:
            fh.seek(max(0, size - _TAIL))
            tail = fh.read()
        if JPEG_EOI not in tail:
            problem = _decodes(path)
            if problem is not None:
                return f"truncated JPEG ({size} bytes, no end-of-image marker): {problem}"
    return None


def check_images(paths: list[str], threads: int = 1) -> list[tuple[str, str]]:
    """``[(path, what is wrong)]`` for every bad file of ``paths``, in their order."""
    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        problems = list(pool.map(image_problem, paths))
    return [(p, why) for p, why in zip(paths, problems, strict=True) if why is not None]


#: How many problems the error message lists; the file it names lists them all.
SHOWN = 20


def describe(
    problems: list[tuple[str, str]],
    total: int,
    full_list: str | os.PathLike | None = None,
    shown: int = SHOWN,
) -> str:
    """One message naming every problem of a dataset (the first ``shown``; all are in
    ``full_list``) and what is wrong with each: its listing's defects
    (:mod:`vcrbench.listing`) and its bad image files, of ``total`` images checked."""
    listed = "; ".join(f"{p}: {why}" for p, why in problems[:shown])
    more = f"; and {len(problems) - shown} more" if len(problems) > shown else ""
    where = f" (all listed in {full_list})" if full_list is not None else ""
    return (
        f"{len(problems)} problem(s) with the dataset ({total} images checked){where}: "
        f"{listed}{more}. Fix or remove them (dataset.exclude lists image ids to leave out, "
        "dataset.on_error: skip leaves out images that cannot be read)"
    )


def write_problems(problems: list[tuple[str, str]], path: str | os.PathLike) -> None:
    """The full list of a dataset's problems at ``path``, one ``<where>\t<what>`` a line
    (written atomically); no problem removes a list an earlier check left."""
    if not problems:
        Path(path).unlink(missing_ok=True)
        return
    with io.atomic_path(path) as tmp:
        tmp.write_text("".join(f"{where}\t{what}\n" for where, what in problems))
