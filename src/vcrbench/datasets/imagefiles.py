"""Every image file of a dataset checked before any work: :func:`check_images`.

The workflow's ``check_images`` job runs it on every image of the dataset, in parallel, and names
every bad file at once with what is wrong with it (an empty file, a file that is not an image, a
truncated JPEG, one that does not decode), with the defects of the dataset's listing (a missing
file, an unknown label, a duplicate row: :mod:`vcrbench.datasets.listing`), in one message
(:func:`describe`; the full list in a file, :func:`write_problems`), before any other job.

:func:`load_image` (:func:`read_image`: and what it did) decodes a file to 8-bit RGB, the pixels
the clean set starts from; :func:`resize_center_crop` makes the models' view of it and
:func:`bounded_size` its stored size (``dataset.resolution: stored``). It is cheap where files are
sound: a file is opened (its header read), its format's integrity check run (``verify``: chunk CRCs
for PNG), and a JPEG is fully decoded only when it does not end with the end-of-image marker.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from vcrbench.errors import DatasetError
from vcrbench.files import io

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
    (:mod:`vcrbench.datasets.listing`) and its bad image files, of ``total`` images checked."""
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


# --------------------------------------------------------------------------- decoding


def load_image(path: str | os.PathLike, *, exif_transpose: bool) -> np.ndarray:
    """Decode an image file to HxWx3 uint8 RGB.

    Greyscale is replicated to three channels; an alpha channel is composited onto white;
    16-bit and float images are rescaled to 8 bits; palette and CMYK images are converted. The
    EXIF orientation tag is ignored, as torchvision and timm ignore it, unless ``exif_transpose``
    (``dataset.exif_transpose``) turns the image upright by it first.
    An unreadable or truncated file raises :class:`DatasetError` naming the file.
    """
    return read_image(path, exif_transpose=exif_transpose)[0]


def read_image(path: str | os.PathLike, *, exif_transpose: bool) -> tuple[np.ndarray, str]:
    """:func:`load_image`, and what was done to the file's pixels to make them 8-bit RGB (one
    phrase each, ``; ``-joined: ``CMYK to RGB``, ``RGBA composited on white``, ``16-bit
    greyscale (I;16) scaled to 8 bits, to RGB``; ``""``: nothing, an 8-bit RGB file)."""
    path = Path(path)
    try:
        with Image.open(path) as im:
            im.load()
            im = ImageOps.exif_transpose(im) if exif_transpose else im
            return _to_rgb8(im), conversion(im)
    except (
        UnidentifiedImageError,
        Image.DecompressionBombError,  # not an OSError: would escape unnamed, even with 'skip'
        OSError,
        SyntaxError,
        ValueError,
    ) as exc:
        raise DatasetError(f"cannot read image {path}: {exc}") from exc


def _to_rgb8(im: Image.Image) -> np.ndarray:
    if im.mode in ("I;16", "I;16B", "I;16L", "I;16N", "I", "F"):
        arr = np.asarray(im).astype(np.float64)
        top = 65535.0 if im.mode.startswith("I;16") or arr.max() > 255 else 255.0
        if im.mode == "F":
            top = 1.0 if arr.max() <= 1.0 else 255.0
        arr = np.clip(np.round(arr / top * 255.0), 0, 255).astype(np.uint8)
        return np.repeat(arr[..., None], 3, axis=2)
    if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        rgba = im.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return np.asarray(Image.alpha_composite(background, rgba).convert("RGB"))
    arr = np.asarray(im.convert("RGB"))
    return np.ascontiguousarray(arr)


#: What :func:`_to_rgb8` does to an image of each mode other than RGB, as :func:`conversion` says
#: it.
_CONVERSIONS = {
    "L": "greyscale (L) to RGB",
    "1": "1-bit (1) to RGB",
    "P": "palette (P) to RGB",
    "CMYK": "CMYK to RGB",
    "YCbCr": "YCbCr to RGB",
    "LAB": "Lab to RGB",
    "HSV": "HSV to RGB",
    "RGBA": "RGBA composited on white",
    "LA": "greyscale with alpha (LA) composited on white, to RGB",
    "PA": "palette with alpha (PA) composited on white",
    "I": "32-bit integer greyscale (I) scaled to 8 bits, to RGB",
    "F": "floating-point greyscale (F) scaled to 8 bits, to RGB",
}


def conversion(im: Image.Image) -> str:
    """What :func:`_to_rgb8` does to ``im`` (``""``: nothing, it is 8-bit RGB)."""
    if im.mode.startswith("I;16"):
        return f"16-bit greyscale ({im.mode}) scaled to 8 bits, to RGB"
    if im.mode == "P" and "transparency" in im.info:
        return "palette with transparency (P) composited on white"
    return _CONVERSIONS.get(im.mode, "" if im.mode == "RGB" else f"{im.mode} to RGB")


def resize_center_crop(image: np.ndarray, resize: int, crop: int) -> np.ndarray:
    """Resize the shorter side to ``resize`` (bilinear, antialiased), centre-crop ``crop``²
    (``dataset.resize`` and ``dataset.crop``: :attr:`vcrbench.settings.DatasetSettings.view`).

    Matches torchvision's ``Resize(resize)`` + ``CenterCrop(crop)`` on PIL images. Images smaller
    than ``resize`` on their shorter side are upsampled (and logged by the caller).
    """
    h, w = image.shape[:2]
    if min(h, w) < 1:
        raise ValueError("empty image")
    if h <= w:
        new_h, new_w = resize, int(resize * w / h)
    else:
        new_h, new_w = int(resize * h / w), resize
    im = Image.fromarray(image)
    if (new_h, new_w) != (h, w):
        im = im.resize((new_w, new_h), Image.BILINEAR)
    top = int(round((new_h - crop) / 2.0))
    left = int(round((new_w - crop) / 2.0))
    out = np.asarray(im)[top : top + crop, left : left + crop]
    if out.shape[:2] != (crop, crop):
        raise ValueError(f"crop {crop} does not fit the resized image {new_h}x{new_w}")
    return np.ascontiguousarray(out)


def bounded_size(image: np.ndarray, max_side: int | None, min_side: int = 72) -> np.ndarray:
    """The image at its stored resolution, its longer side at most ``max_side`` (``None``: no
    bound) and its shorter side at least ``min_side`` (bilinear, antialiased, the aspect ratio
    kept; unchanged where both hold). The VCR authors' generator corrupts and measures the
    full-resolution file; ILSVRC2012's validation images are mostly 500 pixels on the longer side,
    so the schema's default of ``dataset.stored_max_side`` (512) keeps nearly all of them as
    stored and bounds memory and time for the rest. ``min_side``: VIF's smallest side
    (:func:`vcrbench.vif.min_side`, 72), below which the authors' VIF fails; such images are
    enlarged to it."""
    if max_side is not None and max_side < min_side:
        raise ValueError(f"max_side must be at least min_side={min_side} or None, not {max_side}")
    h, w = image.shape[:2]
    if max_side is not None and max(h, w) > max_side:
        scale = max_side / max(h, w)
    elif min(h, w) < min_side:
        scale = min_side / min(h, w)
    else:
        return image
    top = max_side if max_side is not None else max(round(h * scale), round(w * scale))
    size = (min(top, max(min_side, round(w * scale))), min(top, max(min_side, round(h * scale))))
    return np.asarray(Image.fromarray(image).resize(size, Image.BILINEAR))
