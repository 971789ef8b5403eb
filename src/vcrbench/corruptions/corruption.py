"""What a corruption is: a function, its parameters and their domain, and its variants.

A corruption is a function ``f(image, params, rng) -> image`` of an HxWx3 uint8 RGB image, a dict
of parameters drawn from a declared box domain C (continuous, or discrete on a grid:
``Param(grid=...)``), and a ``numpy.random.Generator``; it is wrapped in a :class:`Corruption`
that validates parameters, seeds the generator from an integer seed and converts the result to
uint8 (rounding, clipping to [0, 255]). A :class:`Variant` replaces a corruption's function
and/or some of its parameters for its VCR sets (:meth:`Corruption.with_variant`). Corruptions are
registered and found by name in :mod:`vcrbench.corruptions.registry`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from vcrbench.corruptions.values import (
    DEFAULT_CAST,
    casting,
    check_image,
    check_interval,
    check_seed,
    to_uint8,
)
from vcrbench.errors import CorruptionError
from vcrbench.vocab import OTHER_CATEGORY, param_column

CorruptionFunction = Callable[[np.ndarray, Mapping[str, float], np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class Param:
    """One continuous parameter of a corruption.

    ``limits`` is where the function is defined at all (e.g. a standard deviation ≥ 0);
    ``identity`` is the value at which the corruption changes nothing (Δv = 0); the sampled
    domain (calibrated, see the domains file) lies within ``limits``.
    """

    name: str
    identity: float
    limits: tuple[float, float] = (-math.inf, math.inf)
    doc: str = ""
    #: How the Δv-uniform path moves this parameter: ``"linear"``, or ``"log"`` (geometric; for a
    #: parameter whose effect is multiplicative, such as shot noise's photon count).
    scale: str = "linear"
    #: A discrete parameter: ``(origin, step)``, it takes only the values origin + k·step (k an
    #: integer) inside its domain, each drawn with the same probability by
    #: :meth:`Corruption.sample_uniform` (odd kernel sizes: ``(1, 2)``; integers: ``(0, 1)``).
    #: None: continuous.
    grid: tuple[float, float] | None = None

    def __post_init__(self):
        if self.scale not in ("linear", "log"):
            raise CorruptionError(f"parameter {self.name!r}: scale must be 'linear' or 'log'")
        if self.scale == "log" and self.limits[0] <= 0:
            raise CorruptionError(f"parameter {self.name!r}: a log scale needs positive limits")
        if self.grid is not None and not (
            len(self.grid) == 2 and self.grid[1] > 0 and self.scale == "linear"
        ):
            raise CorruptionError(
                f"parameter {self.name!r}: grid must be (origin, step) with step > 0, on a "
                "linear scale"
            )

    def grid_values(self, low: float, high: float) -> np.ndarray:
        """The values of a discrete parameter in [low, high], increasing (empty if none)."""
        origin, step = self.grid
        first = math.ceil((low - origin) / step - _GRID_TOL)
        last = math.floor((high - origin) / step + _GRID_TOL)
        # clipped: the ends computed as origin + k·step may miss low/high by a rounding error
        return np.clip(origin + step * np.arange(first, last + 1, dtype=np.float64), low, high)

    def describe_grid(self) -> str:
        """``origin + k·step`` in words, for errors and docs."""
        origin, step = self.grid
        return f"{origin:g} + k·{step:g} for integer k"


#: How far (in steps) a discrete parameter's value may lie from its grid and still be on it.
_GRID_TOL = 1e-6


@dataclass(frozen=True)
class Corruption:
    """A registered corruption with its parameter domain.

    Attributes
    ----------
    name, source:
        Registry name and where its definition comes from (``imagenet-c``, ``albumentations``,
        ``geirhos2018`` or ``user``).
    params:
        The parameters, in a fixed order.
    domain:
        ``{param: (low, high)}``, the box C that sampling draws from.
    imagenet_c:
        The five ImageNet-C severities as parameter dicts, or None.
    similarity_class:
        ``"noise"``, ``"blur"`` or None (docs/method.md §6).
    category:
        ImageNet-C's corruption category (noise, blur, weather, digital) where the corruption
        belongs to one, else ``"other"`` (the by-category tables, docs/figures.md).
    cast:
        How its float output (and any intermediate uint8 image) becomes uint8: ``"round"`` or
        ``"truncate"`` (the VCR authors' and ImageNet-C's ``np.uint8``; ``values.CASTS``).
    """

    name: str
    source: str
    params: tuple[Param, ...]
    function: CorruptionFunction
    domain: Mapping[str, tuple[float, float]]
    imagenet_c: tuple[dict[str, float], ...] | None = None
    similarity_class: str | None = None
    description: str = ""
    reason: str = ""
    calibration: Mapping[str, Any] = field(default_factory=dict)
    category: str = OTHER_CATEGORY
    cast: str = DEFAULT_CAST
    #: The variant chosen (:func:`register_variant`), "" for the registered function.
    variant: str = ""
    #: The registered corruption a variant was made from (its ImageNet-C sets' function).
    base: Corruption | None = field(default=None, repr=False, compare=False)

    @property
    def param_names(self) -> list[str]:
        return [p.name for p in self.params]

    @property
    def param_columns(self) -> list[str]:
        """The columns of its parameters in manifests, shards and trials (``param.<name>``)."""
        return [param_column(p.name) for p in self.params]

    @property
    def identity(self) -> dict[str, float]:
        """The parameters that leave an image unchanged (clipped into the domain)."""
        return {
            p.name: float(self._on_grid(p, np.clip(p.identity, *self.domain[p.name])))
            for p in self.params
        }

    def validate(self, params: Mapping[str, float], within: str = "domain") -> dict[str, float]:
        """Check ``params`` (every parameter present, no other key, finite, inside the domain).

        ``within="limits"`` checks against where the function is defined instead of the sampled
        domain (used for ImageNet-C's fixed severities, which a narrowed domain may exclude).
        """
        if within not in ("domain", "limits"):
            raise ValueError(f"within must be 'domain' or 'limits', not {within!r}")
        unknown = sorted(set(params) - set(self.param_names))
        if unknown:
            raise CorruptionError(
                f"corruption {self.name!r}: unknown parameter(s) {unknown}; "
                f"its parameters are {self.param_names}"
            )
        out = {}
        for p in self.params:
            if p.name not in params:
                raise CorruptionError(f"corruption {self.name!r}: parameter {p.name!r} is missing")
            try:
                value = float(params[p.name])
            except (TypeError, ValueError):
                raise CorruptionError(
                    f"corruption {self.name!r}: parameter {p.name!r} = {params[p.name]!r} "
                    "is not a number"
                ) from None
            lo, hi = self.domain[p.name] if within == "domain" else p.limits
            # A relative tolerance so that values computed on the domain's ends pass.
            tol = 1e-9 * max(1.0, abs(lo), abs(hi)) if math.isfinite(hi - lo) else 0.0
            if not (math.isfinite(value) and lo - tol <= value <= hi + tol):
                what = "domain" if within == "domain" else "valid range"
                raise CorruptionError(
                    f"corruption {self.name!r}: parameter {p.name!r} = {value!r} is outside its "
                    f"{what} [{lo}, {hi}]"
                )
            out[p.name] = min(max(value, lo), hi) if within == "domain" else value
            if p.grid is not None:
                origin, step = p.grid
                k = round((out[p.name] - origin) / step)
                if abs((out[p.name] - origin) / step - k) > _GRID_TOL:
                    raise CorruptionError(
                        f"corruption {self.name!r}: parameter {p.name!r} = {value!r} is not one "
                        f"of its values ({p.describe_grid()}; variant {self.variant!r})"
                    )
                out[p.name] = origin + k * step
                if within == "domain":
                    out[p.name] = min(max(out[p.name], lo), hi)
        return out

    def apply(
        self, image: np.ndarray, params: Mapping[str, float], seed: int, within: str = "domain"
    ) -> np.ndarray:
        """Corrupt one HxWx3 uint8 image; the same image, parameters and seed give the same pixels.

        The seed initialises a local PCG64 generator: no global random state is read or changed.
        """
        image = check_image(image, self.name)
        values = self.validate(params, within=within)
        rng = np.random.Generator(np.random.PCG64(check_seed(seed, self.name)))
        with casting(self.cast):
            out = self.function(image, values, rng)
        return to_uint8(out, image.shape, self.name, self.cast)

    def sample_uniform(self, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """``n`` parameter vectors c ~ U(C), each parameter independently (the paper's sampling).

        A discrete parameter (``Param.grid``) takes each of its values in the domain with the same
        probability (the toolbox's ``random.choice`` of odd sizes, ``randint``): the uniform draw
        of a continuous one, cut into as many equal intervals as it has values.
        """
        return {
            p.name: self._equal_mass(p, rng.uniform(*self.domain[p.name], size=n))
            for p in self.params
        }

    def _equal_mass(self, p: Param, u: np.ndarray) -> np.ndarray:
        """``u`` ~ U(domain) as a discrete parameter's values, each with the same probability."""
        if p.grid is None:
            return u
        lo, hi = self.domain[p.name]
        values = p.grid_values(lo, hi)
        if hi == lo:
            return np.full(np.shape(u), values[0])
        index = np.floor((np.asarray(u) - lo) / (hi - lo) * len(values)).astype(np.int64)
        return values[np.clip(index, 0, len(values) - 1)]

    def _on_grid(self, p: Param, value):
        """``value`` (inside the domain) moved to the nearest value of a discrete parameter."""
        if p.grid is None:
            return value
        values = p.grid_values(*self.domain[p.name])
        step = p.grid[1]
        index = np.rint((np.asarray(value, dtype=np.float64) - values[0]) / step).astype(np.int64)
        return values[np.clip(index, 0, len(values) - 1)]

    def path(
        self, t: np.ndarray, side: Mapping[str, np.ndarray] | None = None
    ) -> dict[str, np.ndarray]:
        """Points on the 1-D path through C used by Δv-uniform sampling.

        Every parameter moves from its identity value (clipped into the domain; t = 0) to an end
        of its domain (t = 1): linearly, or geometrically for ``scale="log"``. A parameter whose
        identity lies inside its domain (e.g. a signed shift) goes to the upper end where
        ``side[name] < (high - identity) / (high - low)`` and to the lower end otherwise, so that
        with ``t`` and ``side`` independent U(0, 1) a linear parameter is U(low, high) -- the same
        marginal as :meth:`sample_uniform`. ``side=None`` takes the upper end where there is one.
        """
        t = np.asarray(t, dtype=np.float64)
        out = {}
        for p in self.params:
            lo, hi = self.domain[p.name]
            start = float(np.clip(p.identity, lo, hi))
            up, down = hi - start, start - lo
            if side is None or up + down == 0:
                go_up = np.full(t.shape, up > 0 or down == 0)
            else:
                go_up = np.asarray(side[p.name]) < up / (up + down)
            if p.scale == "log":
                value = np.where(go_up, start * (hi / start) ** t, start * (lo / start) ** t)
            else:
                value = np.where(go_up, start + t * up, start - t * down)
            out[p.name] = self._on_grid(p, np.clip(value, lo, hi))
        return out

    def with_domain(self, domain: Mapping[str, Sequence[float]], reason: str) -> Corruption:
        """A copy with some parameters' domains replaced (each must lie within its limits), and
        why (``reason``; ``""`` keeps this corruption's)."""
        new = dict(self.domain)
        for key, value in domain.items():
            if key not in self.param_names:
                raise CorruptionError(
                    f"corruption {self.name!r}: domain override for unknown parameter {key!r}; "
                    f"its parameters are {self.param_names}"
                )
            new[key] = check_interval(self.name, key, value, self._param(key).limits)
            _check_grid(self.name, self._param(key), new[key])
        return replace(self, domain=new, reason=reason or self.reason, calibration={})

    def with_variant(self, variant: Variant) -> Corruption:
        """This corruption as ``variant``: its function and parameters replaced where it replaces
        them; the domain stays (each must lie within the variant's limits and hold a value of a
        discrete parameter). The ImageNet-C sets keep the registered function
        (:meth:`for_imagenet_c`)."""
        if self.variant:
            raise CorruptionError(f"corruption {self.name!r} is already variant {self.variant!r}")
        params = tuple(variant.params.get(p.name, p) for p in self.params)
        for p in params:
            check_interval(self.name, p.name, self.domain[p.name], p.limits)
            _check_grid(self.name, p, self.domain[p.name])
        return replace(
            self,
            params=params,
            function=variant.function or self.function,
            variant=variant.name,
            base=self,
        )

    def for_imagenet_c(self) -> Corruption:
        """The corruption that makes the ImageNet-C sets: the registered function and parameters
        (ImageNet-C's), whatever variant makes the VCR sets; the domain is this one's."""
        if self.base is None:
            return self
        return replace(
            self, params=self.base.params, function=self.base.function, variant="", base=None
        )

    def _param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    def describe(self) -> dict[str, Any]:
        """Plain-data description (for logs, docs and Parquet metadata); ``variant`` and ``cast``
        only where they are not the default (so a default run's metadata stays as it was)."""
        return {
            "name": self.name,
            "source": self.source,
            "params": {
                p.name: {"domain": list(self.domain[p.name]), "identity": p.identity}
                for p in self.params
            },
            "imagenet_c": [dict(d) for d in self.imagenet_c] if self.imagenet_c else None,
            "similarity_class": self.similarity_class,
            "reason": self.reason,
            **({"variant": self.variant} if self.variant else {}),
            **({"cast": self.cast} if self.cast != DEFAULT_CAST else {}),
        }


def _check_grid(name: str, p: Param, interval: Sequence[float]) -> None:
    """A discrete parameter's domain must hold at least one of its values."""
    if p.grid is not None and not len(p.grid_values(*interval)):
        raise CorruptionError(
            f"corruption {name!r}: the domain {list(interval)} of parameter {p.name!r} holds "
            f"none of its values ({p.describe_grid()})"
        )


@dataclass(frozen=True)
class Variant:
    """A named variant of a registered corruption (:func:`register_variant`)."""

    name: str
    description: str
    #: The function of its VCR sets; None: the corruption's own.
    function: CorruptionFunction | None = None
    #: Parameters it replaces, by name (e.g. a discrete kernel size).
    params: Mapping[str, Param] = field(default_factory=dict)
