"""Defenses: a preprocessing in front of a model, applied to every image the model sees.

A defense is a deterministic function of one HxWx3 uint8 RGB image that returns an image of the
same shape (uint8, or floats that are rounded and clipped to 0..255). It runs inside inference on
the clean and the corrupted images alike, before the model's own preprocessing: the defense is
part of the model, and Δv stays the corruption's (measured between the clean and the corrupted
image, never the defended one). See ``docs/defenses.md``.

Built-ins (each with its parameters and defaults):

- ``spatial_smoothing`` (``window``: 3): a median filter over a ``window`` x ``window`` square of
  each colour channel, edges mirrored (Xu, Evans & Qi 2018, feature squeezing; the 3x3 window of
  Yucel et al.'s ZSL study);
- ``tv_minimization`` (``iterations``: 3, ``weight``: 0.1): total-variation denoising (Rudin,
  Osher & Fatemi 1992) by Chambolle's (2004) algorithm, stopped after ``iterations`` steps
  (scikit-image's ``denoise_tv_chambolle`` on the image scaled to [0, 1]); Guo et al. (2018)
  proposed TV minimisation as a defense, Yucel et al. use at most 3 iterations;
- ``jpeg`` (``quality``: 75): a JPEG round trip at that quality (Pillow; Guo et al. 2018);
- ``bit_depth`` (``bits``: 5): each channel quantised to ``2**bits`` evenly spaced levels
  (Xu et al. 2018).

A user's own defense is a function ``f(image, params) -> image`` found by its Python path, as
user corruptions are: ``{function: "package.module:function", <param>: <value>, ...}``; every key
but ``function`` and ``name`` (an optional label) reaches it in ``params``.

This module is a leaf registry: it imports numpy at module level, and SciPy, scikit-image and
Pillow only when a defense runs.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vcrbench.errors import DefenseError, did_you_mean

DefenseFunction = Callable[[np.ndarray, Mapping[str, Any]], np.ndarray]
#: Keys of a defense entry that are not parameters.
ENTRY_KEYS = ("name", "function")


@dataclass(frozen=True)
class DefenseParam:
    """One parameter of a built-in defense: its default, its type and where it is defined."""

    name: str
    default: int | float
    kind: type = float  # int or float
    limits: tuple[float, float] = (-math.inf, math.inf)  # inclusive
    doc: str = ""

    def check(self, value: Any, defense: str) -> int | float:
        where = f"defense {defense!r}: parameter {self.name!r}"
        if self.kind is int:
            if isinstance(value, bool) or not isinstance(value, int | np.integer):
                raise DefenseError(f"{where} must be an integer, not {value!r}")
            value = int(value)
        else:
            if isinstance(value, bool) or not isinstance(value, int | float | np.number):
                raise DefenseError(f"{where} must be a number, not {value!r}")
            value = float(value)
            if not math.isfinite(value):
                raise DefenseError(f"{where} must be finite, not {value!r}")
        lo, hi = self.limits
        if not lo <= value <= hi:
            raise DefenseError(f"{where} = {value!r} is outside its valid range [{lo}, {hi}]")
        return value


@dataclass(frozen=True)
class DefenseKind:
    """A registered built-in: its function, parameters and a one-line description."""

    name: str
    function: DefenseFunction
    params: tuple[DefenseParam, ...]
    description: str = ""


@dataclass(frozen=True)
class Defense:
    """A defense with its parameters fixed (what a model entry's ``defense`` describes)."""

    name: str
    function: DefenseFunction
    params: Mapping[str, Any] = field(default_factory=dict)
    #: The user function's Python path (None for a built-in).
    path: str | None = None
    description: str = ""

    @property
    def label(self) -> str:
        """A short readable name, e.g. ``tv_minimization(iterations=3, weight=0.1)``."""
        args = ", ".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        return f"{self.name}({args})" if args else self.name

    def to_config(self) -> dict:
        """The entry that :func:`get_defense` turns back into this defense (defaults written)."""
        head = {"name": self.name}
        if self.path is not None:
            head["function"] = self.path
        return {**head, **{k: self.params[k] for k in sorted(self.params)}}

    def apply(self, image: np.ndarray) -> np.ndarray:
        """The defended image: uint8, the shape of ``image``."""
        if not isinstance(image, np.ndarray) or image.dtype != np.uint8:
            got = image.dtype if isinstance(image, np.ndarray) else type(image).__name__
            raise DefenseError(f"defense {self.name!r}: expected a uint8 image, got {got}")
        if image.ndim != 3 or image.shape[2] != 3:
            raise DefenseError(
                f"defense {self.name!r}: expected an HxWx3 RGB image, got shape {image.shape}"
            )
        out = np.asarray(self.function(np.ascontiguousarray(image), dict(self.params)))
        if out.shape != image.shape:
            raise DefenseError(
                f"defense {self.name!r} returned an image of shape {out.shape}, "
                f"expected {image.shape}"
            )
        if out.dtype == np.uint8:
            return np.ascontiguousarray(out)
        if not np.issubdtype(out.dtype, np.number) or not np.all(np.isfinite(out)):
            raise DefenseError(f"defense {self.name!r} returned non-finite or non-numeric pixels")
        return np.clip(np.rint(out), 0, 255).astype(np.uint8)

    def apply_batch(self, images: np.ndarray) -> np.ndarray:
        """Every image of an NxHxWx3 uint8 batch, defended (a new array)."""
        images = np.asarray(images)
        if images.ndim != 4:
            raise DefenseError(
                f"defense {self.name!r}: expected an NxHxWx3 batch, got shape {images.shape}"
            )
        out = np.empty_like(images)
        for i in range(len(images)):
            out[i] = self.apply(images[i])
        return out


# --------------------------------------------------------------------------- the registry

_REGISTRY: dict[str, DefenseKind] = {}


def register_defense(name: str, params: tuple[DefenseParam, ...] = (), description: str = ""):
    """Decorator: register ``f(image, params) -> image`` as the built-in defense ``name``."""

    def deco(fn: DefenseFunction) -> DefenseFunction:
        if name in _REGISTRY:
            raise DefenseError(f"defense {name!r} is already registered")
        doc = description or (fn.__doc__ or "").strip().split("\n\n")[0]
        _REGISTRY[name] = DefenseKind(name, fn, tuple(params), " ".join(doc.split()))
        return fn

    return deco


def list_defenses() -> list[str]:
    """Names of the built-in defenses, sorted."""
    return sorted(_REGISTRY)


def get_defense(entry: str | Mapping[str, Any]) -> Defense:
    """The defense a model entry's ``defense`` describes (raises :class:`DefenseError`).

    ``entry`` is a built-in's name (its default parameters), a mapping ``{name: <built-in>,
    <param>: <value>, ...}``, or a user defense ``{function: "package.module:function", ...}``.
    """
    if isinstance(entry, str):
        entry = {"name": entry}
    if not isinstance(entry, Mapping):
        raise DefenseError(
            f"a defense is a name ({', '.join(list_defenses())}) or a mapping with `name` or "
            f"`function`, not {entry!r}"
        )
    entry = dict(entry)
    if entry.get("function") is not None:
        return _user_defense(entry)
    name = entry.pop("name", None)
    if name is None:
        raise DefenseError(
            f"defense {entry!r} needs `name` (one of {', '.join(list_defenses())}) or "
            "`function` (package.module:function)"
        )
    entry.pop("function", None)
    if name not in _REGISTRY:
        raise DefenseError(
            f"unknown defense {name!r}{did_you_mean(str(name), _REGISTRY)}; known: "
            f"{', '.join(list_defenses())}; or give a user defense as function: "
            "package.module:function"
        )
    kind = _REGISTRY[name]
    known = [p.name for p in kind.params]
    unknown = sorted(set(entry) - set(known))
    if unknown:
        raise DefenseError(
            f"defense {name!r}: unknown parameter(s) {unknown}; its parameters are {known}"
        )
    values = {p.name: p.check(entry.get(p.name, p.default), name) for p in kind.params}
    return Defense(name, kind.function, values, description=kind.description)


def _user_defense(entry: dict) -> Defense:
    from vcrbench.corruptions.registry import load_function

    path = entry.pop("function")
    try:
        function = load_function(path)
    except ValueError as exc:  # CorruptionError: the message names the path
        raise DefenseError(f"user defense: {exc}") from None
    name = entry.pop("name", None) or str(path)
    if not isinstance(name, str):
        raise DefenseError(f"user defense {path!r}: `name` must be a string, not {name!r}")
    bad = [k for k in entry if not isinstance(k, str)]
    if bad:
        raise DefenseError(f"user defense {path!r}: parameter names must be strings, not {bad}")
    return Defense(name, function, entry, path=str(path), description=f"user defense {path}")


# --------------------------------------------------------------------------- built-ins


@register_defense(
    "spatial_smoothing",
    params=(DefenseParam("window", 3, int, (2, 15), "side of the square median window"),),
)
def spatial_smoothing(image: np.ndarray, params: Mapping[str, Any]) -> np.ndarray:
    """Median filter over a window x window square of each channel (edges mirrored)."""
    from scipy.ndimage import median_filter

    w = int(params["window"])
    return median_filter(image, size=(w, w, 1), mode="reflect")


@register_defense(
    "tv_minimization",
    params=(
        DefenseParam("iterations", 3, int, (1, 1000), "steps of Chambolle's algorithm"),
        DefenseParam("weight", 0.1, float, (1e-6, 10.0), "TV weight, image on [0, 1]"),
    ),
)
def tv_minimization(image: np.ndarray, params: Mapping[str, Any]) -> np.ndarray:
    """Total-variation denoising (Chambolle's algorithm), a fixed number of iterations."""
    from skimage.restoration import denoise_tv_chambolle

    out = denoise_tv_chambolle(
        image.astype(np.float64) / 255.0,
        weight=float(params["weight"]),
        # scikit-image's first pass returns the image unchanged (it only starts the dual
        # variable): n updates that reach the image take max_num_iter = n + 1.
        max_num_iter=int(params["iterations"]) + 1,
        channel_axis=-1,
    )
    return out * 255.0


@register_defense(
    "jpeg",
    params=(DefenseParam("quality", 75, int, (1, 100), "JPEG quality (Pillow's scale)"),),
)
def jpeg(image: np.ndarray, params: Mapping[str, Any]) -> np.ndarray:
    """A JPEG round trip (encode at the quality, decode)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="JPEG", quality=int(params["quality"]))
    buffer.seek(0)
    with Image.open(buffer) as decoded:
        return np.asarray(decoded.convert("RGB"), dtype=np.uint8)


@register_defense(
    "bit_depth",
    params=(DefenseParam("bits", 5, int, (1, 8), "bits per channel kept"),),
)
def bit_depth(image: np.ndarray, params: Mapping[str, Any]) -> np.ndarray:
    """Each channel quantised to 2**bits evenly spaced levels between 0 and 255."""
    levels = 2 ** int(params["bits"]) - 1
    return np.rint(np.rint(image / 255.0 * levels) * (255.0 / levels))


__all__ = [
    "Defense",
    "DefenseError",
    "DefenseKind",
    "DefenseParam",
    "get_defense",
    "list_defenses",
    "register_defense",
]
