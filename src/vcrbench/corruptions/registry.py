"""The corruption registry: what a corruption is, its parameter domain, and how to find one by name.

A corruption is a function ``f(image, params, rng) -> image`` of an HxWx3 uint8 RGB image, a dict
of continuous parameters drawn from a declared box domain C, and a ``numpy.random.Generator``; it
is wrapped in a :class:`Corruption` that validates parameters, seeds the generator from an integer
seed and converts the result to uint8 (clipping to [0, 255]; rounding, or truncating with the
``cast`` option). Built-in corruptions are
registered with :func:`register_corruption`; a user's own function is found from a Python path
(``"package.module:function"``) given in the config entry, with its domain, and needs no change to
the workflow.

Domains of the built-ins are calibrated on measured Δv and stored, with the reason for each, in
``vcrbench/data/corruption_domains.yaml``; a config entry may override them (``{"domain": {"sigma":
[lo, hi]}}``).
"""

from __future__ import annotations

import importlib
import importlib.resources
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from vcrbench.corruptions.domains import calibrated_domains, domain_set, with_domain_set
from vcrbench.corruptions.values import (
    DEFAULT_CAST,
    casting,
    check_cast,
    check_image,
    check_interval,
    check_seed,
    to_uint8,
)
from vcrbench.errors import CorruptionError, did_you_mean
from vcrbench.vocab import (
    CORRUPTION_CATEGORIES,
    DEFAULT_DOMAIN_SET,
    OTHER_CATEGORY,
    param_column,
)

#: Similarity classes of docs/method.md §6: human data of one member may serve the whole class.
#: ``contrast`` (ImageNet-C's and Geirhos et al.'s contrast reduction) is VCR-Bench's, not the
#: paper's: see docs/humans.md.
SIMILARITY_CLASSES = ("noise", "blur", "contrast")
#: Keys of a corruption's config entry that get_corruption understands.
OPTION_KEYS = frozenset(
    {
        "domain",
        "domain_set",
        "reason",
        "function",
        "imagenet_c",
        "similarity_class",
        "identity",
        "n_samples",
        "cast",
    }
)

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

    def __post_init__(self):
        if self.scale not in ("linear", "log"):
            raise CorruptionError(f"parameter {self.name!r}: scale must be 'linear' or 'log'")
        if self.scale == "log" and self.limits[0] <= 0:
            raise CorruptionError(f"parameter {self.name!r}: a log scale needs positive limits")


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
        return {p.name: float(np.clip(p.identity, *self.domain[p.name])) for p in self.params}

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
        """``n`` parameter vectors c ~ U(C), each parameter independently (the paper's sampling)."""
        return {p.name: rng.uniform(*self.domain[p.name], size=n) for p in self.params}

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
            out[p.name] = np.clip(value, lo, hi)
        return out

    def with_domain(self, domain: Mapping[str, Sequence[float]], reason: str = "") -> Corruption:
        """A copy with some parameters' domains replaced (each must lie within its limits)."""
        new = dict(self.domain)
        for key, value in domain.items():
            if key not in self.param_names:
                raise CorruptionError(
                    f"corruption {self.name!r}: domain override for unknown parameter {key!r}; "
                    f"its parameters are {self.param_names}"
                )
            new[key] = check_interval(self.name, key, value, self._param(key).limits)
        return replace(self, domain=new, reason=reason or self.reason, calibration={})

    def _param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    def describe(self) -> dict[str, Any]:
        """Plain-data description (for logs, docs and Parquet metadata); ``cast`` only where it is
        not the default (so a default run's metadata stays as it was)."""
        out = {
            "name": self.name,
            "source": self.source,
            "params": {
                p.name: {"domain": list(self.domain[p.name]), "identity": p.identity}
                for p in self.params
            },
            "imagenet_c": [dict(d) for d in self.imagenet_c] if self.imagenet_c else None,
            "similarity_class": self.similarity_class,
            "reason": self.reason,
        }
        if self.cast != DEFAULT_CAST:
            out["cast"] = self.cast
        return out


# --------------------------------------------------------------------------- the registry

_REGISTRY: dict[str, Corruption] = {}


def register_corruption(
    name: str,
    *,
    params: Sequence[Param],
    source: str = "user",
    domain: Mapping[str, Sequence[float]] | None = None,
    imagenet_c: Sequence[Mapping[str, float]] | None = None,
    similarity_class: str | None = None,
    category: str = OTHER_CATEGORY,
    description: str = "",
    function: CorruptionFunction | None = None,
    replace_existing: bool = False,
):
    """Register a corruption; use as a decorator, or pass ``function=`` to register directly.

    ``domain`` defaults to the calibrated domain in the domains file (built-ins) and must be given
    for any parameter that file does not list. ``category`` is ImageNet-C's category the
    corruption belongs to (:data:`~vcrbench.vocab.CORRUPTION_CATEGORIES`), else ``"other"``.
    Returns the function (decorator form) or the :class:`Corruption` (direct form). Everything
    about a corruption is given here (docs/architecture.md, "Add a corruption").
    """

    def register(fn: CorruptionFunction):
        if name in _REGISTRY and not replace_existing:
            raise CorruptionError(f"corruption {name!r} is already registered")
        corruption = build_corruption(
            name,
            fn,
            params,
            source=source,
            domain=domain,
            imagenet_c=imagenet_c,
            similarity_class=similarity_class,
            category=category,
            description=description or (inspect.getdoc(fn) or "").split("\n\n")[0],
        )
        _REGISTRY[name] = corruption
        return fn if function is None else corruption

    if function is not None:
        return register(function)
    return register


def build_corruption(
    name: str,
    function: CorruptionFunction,
    params: Sequence[Param],
    *,
    source: str,
    domain: Mapping[str, Sequence[float]] | None = None,
    imagenet_c: Sequence[Mapping[str, float]] | None = None,
    similarity_class: str | None = None,
    category: str = OTHER_CATEGORY,
    description: str = "",
) -> Corruption:
    """Assemble and check a :class:`Corruption` (domain from ``domain``, else the domains file)."""
    if not callable(function):
        raise CorruptionError(f"corruption {name!r}: {function!r} is not callable")
    params = tuple(params)
    names = [p.name for p in params]
    if not names or len(set(names)) != len(names):
        raise CorruptionError(f"corruption {name!r}: needs distinct parameter names, got {names}")
    if similarity_class not in (None, *SIMILARITY_CLASSES):
        raise CorruptionError(
            f"corruption {name!r}: similarity_class must be one of {SIMILARITY_CLASSES} or null, "
            f"not {similarity_class!r}"
        )
    if category not in (*CORRUPTION_CATEGORIES, OTHER_CATEGORY):
        raise CorruptionError(
            f"corruption {name!r}: category must be one of "
            f"{(*CORRUPTION_CATEGORIES, OTHER_CATEGORY)}, not {category!r}"
        )
    calibrated = calibrated_domains().get(name, {})
    given = dict(domain or {})
    dom, reason, calibration = {}, "", {}
    for p in params:
        if p.name in given:
            dom[p.name] = check_interval(name, p.name, given[p.name], p.limits)
        elif p.name in calibrated.get("domain", {}):
            dom[p.name] = check_interval(name, p.name, calibrated["domain"][p.name], p.limits)
            reason, calibration = calibrated.get("reason", ""), calibrated.get("measured", {})
        else:
            raise CorruptionError(f"corruption {name!r}: no domain given for parameter {p.name!r}")
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise CorruptionError(f"corruption {name!r}: domain for unknown parameter(s) {unknown}")
    corruption = Corruption(
        name=name,
        source=source,
        params=params,
        function=function,
        domain=dom,
        imagenet_c=None,
        similarity_class=similarity_class,
        description=description,
        reason=reason,
        category=category,
        calibration=calibration,
    )
    if imagenet_c is not None:
        severities = tuple(dict(s) for s in imagenet_c)
        if len(severities) != 5:
            raise CorruptionError(f"corruption {name!r}: imagenet_c needs 5 severities")
        for s in severities:
            corruption.validate(s, within="limits")
        corruption = replace(corruption, imagenet_c=severities)
    return corruption


def list_corruptions() -> list[str]:
    """Names of all registered corruptions, sorted."""
    return sorted(_REGISTRY)


def registered_category(name: str) -> str | None:
    """The category of the registered corruption ``name``, or None if none is registered."""
    corruption = _REGISTRY.get(name)
    return None if corruption is None else corruption.category


def unregister_corruption(name: str) -> None:
    """Remove ``name`` from the registry (a test's own corruption, after the test)."""
    if name not in _REGISTRY:
        raise CorruptionError(f"corruption {name!r} is not registered")
    del _REGISTRY[name]


def get_corruption(name: str, options: Mapping[str, Any] | None = None) -> Corruption:
    """The corruption ``name``, with the config entry ``options`` applied.

    ``options`` (all optional): ``domain_set`` (``calibrated``, the default, or ``paper``: the
    authors' toolbox ranges; a corruption the set does not list keeps its calibrated domain),
    ``domain`` ({param: [low, high]} overrides, applied after the set), ``reason`` (why),
    ``function`` ("package.module:function", a user corruption: with ``domain`` for each of its
    parameters, optional ``identity`` {param: value}, ``imagenet_c``, ``similarity_class``).
    ``cast`` (``round``, the default, or ``truncate``: how the output becomes uint8,
    :data:`vcrbench.corruptions.values.CASTS`). ``n_samples`` is a sampling setting and is
    ignored here.
    """
    options = dict(options or {})
    unknown = sorted(set(options) - OPTION_KEYS)
    if unknown:
        raise CorruptionError(
            f"corruption {name!r}: unknown option(s) {unknown}; known: {sorted(OPTION_KEYS)}"
        )
    domain_set(options.get("domain_set") or DEFAULT_DOMAIN_SET)  # an unknown set raises
    cast = check_cast(options.get("cast", DEFAULT_CAST), name)
    if options.get("function"):
        return replace(_user_corruption(name, options), cast=cast)
    if name not in _REGISTRY:
        raise CorruptionError(
            f"unknown corruption {name!r}{did_you_mean(name, _REGISTRY)}; "
            f"known: {', '.join(sorted(_REGISTRY))}; "
            "or give a user corruption as function: package.module:function"
        )
    for key in ("identity", "imagenet_c"):
        if key in options:
            raise CorruptionError(
                f"corruption {name!r}: option {key!r} is only for user corruptions (with function)"
            )
    corruption = with_domain_set(_REGISTRY[name], options.get("domain_set") or DEFAULT_DOMAIN_SET)
    if "similarity_class" in options and options["similarity_class"] != corruption.similarity_class:
        raise CorruptionError(
            f"corruption {name!r}: similarity_class is {corruption.similarity_class!r} and "
            "cannot be changed for a built-in corruption"
        )
    if options.get("domain"):
        corruption = corruption.with_domain(options["domain"], options.get("reason", ""))
    elif options.get("reason"):
        corruption = replace(corruption, reason=options["reason"])
    return replace(corruption, cast=cast) if cast != corruption.cast else corruption


def load_function(path: str) -> CorruptionFunction:
    """Import ``"package.module:function"``; the error names the path."""
    if not isinstance(path, str) or path.count(":") != 1:
        raise CorruptionError(f"function {path!r} must be given as 'package.module:function'")
    module_name, attr = path.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CorruptionError(
            f"function {path!r}: cannot import module {module_name!r}: {exc}"
        ) from exc
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise CorruptionError(f"function {path!r}: module {module_name!r} has no {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise CorruptionError(f"function {path!r} is not callable")
    return obj


def _user_corruption(name: str, options: Mapping[str, Any]) -> Corruption:
    function = load_function(options["function"])
    domain = options.get("domain") or {}
    if not isinstance(domain, Mapping) or not domain:
        raise CorruptionError(
            f"corruption {name!r}: a user corruption needs `domain` ({{param: [low, high]}})"
        )
    identity = dict(options.get("identity") or {})
    unknown = sorted(set(identity) - set(domain))
    if unknown:
        raise CorruptionError(f"corruption {name!r}: identity for unknown parameter(s) {unknown}")
    params = []
    for key, interval in domain.items():
        lo, hi = check_interval(name, key, interval, (-math.inf, math.inf))
        params.append(Param(key, float(identity.get(key, lo)), doc="user parameter"))
    corruption = build_corruption(
        name,
        function,
        params,
        source="user",
        domain=domain,
        imagenet_c=options.get("imagenet_c"),
        similarity_class=options.get("similarity_class"),
        description=f"user corruption {options['function']}",
    )
    return replace(corruption, reason=options.get("reason", ""))
