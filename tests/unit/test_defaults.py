"""The schema is the one source of config defaults: every library keyword default or constant that
repeats a config value is listed here with the schema key it repeats, and must equal the schema's
default; a default that repeats a schema key's value without being listed fails, and so does one
named like a schema key (``level`` for ``estimation.similarity_level`` too) that is listed nowhere,
whatever its value: tied (``TIED``, ``CONSTANTS``) or another quantity (``NOT_SETTINGS``,
``NOT_SETTING_CONSTANTS``, each with its reason). Functions under ``functools.lru_cache`` are read
through the cache.

The workflow passes every setting from the validated config (the plan and the scripts); the
library's own defaults remain for tests and API users, and this file keeps them from drifting.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import vcrbench
from vcrbench import schema

#: ``"module:function"`` (``Class.method`` for methods) -> {parameter: schema key path}
#: (``*`` stands for any name under an object of names, e.g. ``retrain.runs.*``).
TIED: dict[str, dict[str, str]] = {
    "vcrbench.corruptions.corruption:Corruption.__init__": {"cast": "sampling.cast"},
    "vcrbench.figures.style:Style.__init__": {
        "formats": "figures.formats",
        "dpi": "figures.dpi",
        "font_size": "figures.font_size",
        "font_family": "figures.font_family",
        "width": "figures.width",
        "label_space": "figures.label_space",
        "curves_label_space": "figures.curves_label_space",
        "model_bands": "figures.model_bands",
        "band_alpha": "figures.band_alpha",
        "digits": "figures.digits",
        "leaderboard_sort": "figures.leaderboard_sort",
    },
    "vcrbench.inference.run:InferenceOptions.__init__": {
        "batch_size": "inference.batch_size",
        "device": "inference.device",
        "precision": "inference.precision",
        "save_logprobs": "inference.save_logprobs",
    },
    "vcrbench.datasets.kinds:DatasetRequest.__init__": {"split": "dataset.split"},
    "vcrbench.models.spec:ModelSpec.__init__": {"precision": "inference.precision"},
    "vcrbench.retrain.loop:TrainSettings.__init__": {
        "epochs": "retrain.runs.*.epochs",
        "lr": "retrain.runs.*.lr",
        "momentum": "retrain.runs.*.momentum",
        "weight_decay": "retrain.runs.*.weight_decay",
        "batch_size": "retrain.runs.*.batch_size",
        "seed": "seed",
    },
    "vcrbench.settings:VifSettings.__init__": {"variant": "vif.variant", "grey": "vif.grey"},
    "vcrbench.settings:CoverageSettings.__init__": {
        "bins": "coverage.bins",
        "min_count": "coverage.min_count",
        "reference_n": "coverage.reference_n",
        "denominator": "coverage.denominator",
    },
    "vcrbench.settings:DatasetSettings.__init__": {
        key: f"dataset.{key}"
        for key in "kind label_space exclude split resize crop exif_transpose on_error resolution "
        "stored_max_side".split()
    },
    "vcrbench.settings:HumanMappingSettings.__init__": {
        "reference": "humans.mapping.reference",
        "n_images": "humans.mapping.n_images",
        "draws": "humans.mapping.draws",
        "lowpass_sigma_scale": "humans.mapping.lowpass_sigma_scale",
    },
    "vcrbench.settings:EstimationSettings.__init__": {
        key: f"estimation.{key}"
        for key in (
            "bins",
            "min_count",
            "n_boot",
            "level",
            "n_folds",
            "spline",
            "small_sample",
            "bootstrap_penalty",
            "empty_bins",
            "grid_size",
        )  # fmt: skip
    },
    "vcrbench.settings:TableSettings.__init__": {
        "digits": "figures.digits",
        "label_space": "figures.label_space",
        "leaderboard_sort": "figures.leaderboard_sort",
    },
    "vcrbench.vif:vif": {"variant": "vif.variant"},
}

#: ``"module:CONSTANT"`` -> the schema keys whose default it is.
CONSTANTS: dict[str, tuple[str, ...]] = {
    "vcrbench.vocab:N_BINS": (
        "estimation.bins",
        "coverage.bins",
        "$defs.dv_uniform_options.bins",
        "$defs.dv_stratified_options.bins",
    ),
    "vcrbench.vocab:COVERAGE_MIN_COUNT": ("coverage.min_count", "estimation.min_count"),
    "vcrbench.vocab:COVERAGE_REFERENCE_N": ("coverage.reference_n",),
    "vcrbench.vocab:COVERAGE_DENOMINATOR": (
        "coverage.denominator",
        "$defs.dv_uniform_options.denominator",
    ),
    "vcrbench.estimation.bootstrap:DEFAULT_LEVEL": ("estimation.level",),
    "vcrbench.labels:DEFAULT_DECISION16": ("estimation.decision16",),
    "vcrbench.inference.run:DEFAULT_BATCH_SIZE": ("inference.batch_size",),
    "vcrbench.estimation.similarity:SIMILARITY_LEVEL": ("estimation.similarity_level",),
    "vcrbench.estimation.similarity:SIMILARITY_BAND": ("estimation.similarity_band",),
    "vcrbench.vocab:DEFAULT_DOMAIN_SET": ("sampling.domain_set",),
    "vcrbench.vocab:DEFAULT_CAST": ("sampling.cast",),
}

#: Constants named like a schema key that are another quantity: ``"module:CONSTANT"`` -> reason.
NOT_SETTING_CONSTANTS: dict[str, str] = {
    "vcrbench.vif:BATCH_SIZE": "images per Δv batch, not the models' inference.batch_size",
    "vcrbench.testsets.sampling_stratified:MODE": "the name of its sampling mode, not sampling.mode's default",
    "vcrbench.tables.format:FORMATS": "the formats every table is written in, not figures.formats",
    "vcrbench.settings:SMALL_SAMPLE": "the values estimation.small_sample may take",
    "vcrbench.estimation.status:SHORT_LABEL_SPACE": "the values estimation.short_label_space may take",
    "vcrbench.estimation.counts:EMPTY_BINS": "the values estimation.empty_bins may take",
    "vcrbench.vocab:DATASET_LABEL_SPACE": "the config's word for the dataset's own label space",
}

#: Parameters named like a schema key that are another quantity (the reason above each).
NOT_SETTINGS: dict[str, set[str]] = {
    # the device a model is built on, resolved by the caller (inference and fine-tuning pass the
    # one inference.device/retrain.device resolve to; fetch_weights builds on the CPU)
    "vcrbench.models.loading:load_model": {"device"},
    # images per Δv batch of the VIF, not the models' inference.batch_size
    "vcrbench.vif:vif": {"batch_size"},
    # the fraction of the test image a model crops (docs/models.md), not dataset.crop (pixels)
    "vcrbench.models.spec:Preprocessing.__init__": {"crop"},
    # a model's family, not figures.font_family
    "vcrbench.models.spec:ModelSpec.__init__": {"family"},
    # passes of the figure layout, not dv-uniform's max_rounds
    "vcrbench.figures.layout:grow_to_fit_rows": {"rounds"},
    # the report labels of a declared figure or table output, not dataset.labels
    "vcrbench.plan.products.registry:Output.__init__": {"labels"},
    # a unit conversion of Geirhos' raw values, not humans.mapping.lowpass_sigma_scale
    "vcrbench.humans.geirhos.experiments:_numeric": {"scale"},
    # the {reference} wildcard of a path template
    "vcrbench.plan.paths:human_estimates": {"reference"},
    # how a corruption parameter moves on the dv-uniform path, not a lowpass scale
    "vcrbench.corruptions.corruption:Param.__init__": {"scale"},
    # the corruption's variant (its config entry's `variant`, "" for none), not vif.variant
    "vcrbench.corruptions.corruption:Corruption.__init__": {"variant"},
    # the kind of band asked of an estimate (pointwise or simultaneous), not dataset.kind
    "vcrbench.estimation.estimate:Estimate.band": {"kind"},
    # images per Δv measurement batch of test-set generation: no config key (it changes no
    # result), not the models' inference.batch_size
    **{
        f"vcrbench.testsets.testset:{name}": {"batch_size"}
        for name in ("generate_shard", "generate_imagenet_c_shard", "generate_imagenet_c")
    },
}

#: Parameter names that differ from the schema key they stand for.
ALIASES = {"n_bins": "bins", "vif_variant": "variant"}


def schema_default(path: str):
    """The schema's default of the key at ``path`` (``estimation.n_boot``, ``$defs.x.key``; a
    default that is not filled in, ``vif.grey``'s ``absent_default``, too)."""
    return schema.default_of(path)


def _leaves(node, path=()):
    if not isinstance(node, dict):
        return
    for keyword in ("default", schema.ABSENT_DEFAULT):
        if keyword in node and path:
            yield ".".join(path), node[keyword]
    for key, sub in (node.get("properties") or {}).items():
        yield from _leaves(sub, (*path, key))
    if isinstance(node.get("additionalProperties"), dict):
        yield from _leaves(node["additionalProperties"], (*path, "*"))


def schema_leaves() -> dict[str, list[tuple[str, object]]]:
    """Last key name -> [(path, default)] of every schema key with a default."""
    full = schema.schema()
    out: dict[str, list] = {}
    for path, default in [
        *_leaves({k: v for k, v in full.items() if k != "$defs"}),
        *(p for name, d in full.get("$defs", {}).items() for p in _leaves(d, ("$defs", name))),
    ]:
        out.setdefault(path.rsplit(".", 1)[-1], []).append((path, default))
    return out


def _same(value, default) -> bool:
    if value is None or isinstance(value, bool) != isinstance(default, bool):
        return False
    if isinstance(value, tuple | list) and isinstance(default, list):
        return list(value) == default
    try:
        return bool(value == default)
    except (TypeError, ValueError):
        return False


def _callables(module):
    for name, obj in vars(module).items():
        func = inspect.unwrap(obj) if callable(obj) and hasattr(obj, "__wrapped__") else obj
        if inspect.isfunction(func) and func.__module__ == module.__name__:
            yield name, func
        elif inspect.isclass(obj) and obj.__module__ == module.__name__:
            for attr, member in vars(obj).items():
                func = getattr(member, "__func__", member)
                if inspect.isfunction(func):
                    yield f"{name}.{attr}", func


def _resolve(qualified: str):
    module, _, name = qualified.partition(":")
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return inspect.unwrap(getattr(obj, "__func__", obj))


@pytest.fixture(scope="module")
def library_defaults() -> dict[tuple[str, str], object]:
    """``("module:function", parameter) -> default`` of every keyword default in the library."""
    out = {}
    for info in pkgutil.walk_packages(vcrbench.__path__, "vcrbench."):
        module = importlib.import_module(info.name)
        for name, func in _callables(module):
            for p in inspect.signature(func).parameters.values():
                if p.default is not inspect.Parameter.empty:
                    out[(f"{info.name}:{name}", p.name)] = p.default
    return out


@pytest.fixture(scope="module")
def module_constants() -> dict[str, object]:
    """``"module:CONSTANT"`` -> value of every upper-case name a library module assigns itself."""
    out = {}
    for info in pkgutil.walk_packages(vcrbench.__path__, "vcrbench."):
        module = importlib.import_module(info.name)
        source = inspect.getsource(module)
        for name in re.findall(r"^([A-Z][A-Z0-9_]*)\s*(?::[^=\n]+)?=", source, re.MULTILINE):
            if hasattr(module, name):  # not a docstring's line such as "HMRI = 1 - …"
                out[f"{info.name}:{name}"] = getattr(module, name)
    return out


def scalar_leaves() -> dict[str, list[str]]:
    """Key name -> paths of every schema key whose default is a value (not a block's ``{}``)."""
    return {
        key: [path for path, default in found if not isinstance(default, dict)]
        for key, found in schema_leaves().items()
        if any(not isinstance(default, dict) for _, default in found)
    }


def named_like(param: str, leaves: dict[str, list[str]]) -> list[str]:
    """Schema keys a parameter's name stands for: its own name (``ALIASES``), or a key that ends
    in ``_<name>`` (``level`` of ``similarity_level``)."""
    name = ALIASES.get(param, param)
    return sorted(
        p for key, paths in leaves.items() if key == name or key.endswith(f"_{name}") for p in paths
    )


@pytest.mark.parametrize("qualified", sorted(TIED))
def test_tied_defaults_equal_the_schema(qualified):
    params = inspect.signature(_resolve(qualified)).parameters
    for param, path in TIED[qualified].items():
        assert param in params, f"{qualified} has no parameter {param!r}: update TIED"
        default = params[param].default
        assert default is not inspect.Parameter.empty, f"{qualified}({param}) has no default"
        assert _same(default, schema_default(path)), (
            f"{qualified}({param}={default!r}) disagrees with the schema's {path} "
            f"({schema_default(path)!r})"
        )


@pytest.mark.parametrize("qualified", sorted(CONSTANTS))
def test_default_constants_equal_the_schema(qualified):
    module, _, name = qualified.partition(":")
    value = getattr(importlib.import_module(module), name)
    for path in CONSTANTS[qualified]:
        assert _same(value, schema_default(path)), f"{qualified} = {value!r} but {path} says " + (
            f"{schema_default(path)!r}"
        )


def test_every_default_named_like_a_schema_key_is_tied_or_explained(library_defaults):
    leaves = scalar_leaves()
    unexplained = []
    for (qualified, param), default in sorted(library_defaults.items()):
        listed = TIED.get(qualified, {})
        if default is None or param in listed or param in NOT_SETTINGS.get(qualified, set()):
            continue  # None: no default, the caller decides
        paths = named_like(param, leaves)
        if paths and not callable(default):
            unexplained.append(f"{qualified}({param}={default!r}) is named like {paths}")
    assert not unexplained, "tie (TIED) or explain (NOT_SETTINGS):\n" + "\n".join(unexplained)


def test_every_constant_named_like_a_schema_key_is_tied_or_explained(module_constants):
    leaves = scalar_leaves()
    # COVERAGE_MIN_COUNT stands for coverage.min_count: a key's block and name
    blocks = {"_".join(p.split(".")[-2:]): p for paths in leaves.values() for p in paths}
    unexplained = []
    for qualified, value in sorted(module_constants.items()):
        if qualified in CONSTANTS or qualified in NOT_SETTING_CONSTANTS:
            continue
        name = qualified.partition(":")[2].lower().removeprefix("default_")
        paths = leaves.get(name, []) + [p for flat, p in blocks.items() if flat == name]
        if paths:
            unexplained.append(f"{qualified} = {value!r} is named like {sorted(set(paths))}")
    assert not unexplained, "tie (CONSTANTS) or explain (NOT_SETTING_CONSTANTS):\n" + "\n".join(
        unexplained
    )


def test_no_untied_default_repeats_a_schema_value(library_defaults):
    leaves = schema_leaves()
    untied = []
    for (qualified, param), default in sorted(library_defaults.items()):
        if param in TIED.get(qualified, {}) or param in NOT_SETTINGS.get(qualified, set()):
            continue
        for path, value in leaves.get(ALIASES.get(param, param), []):
            if _same(default, value):
                untied.append(f"{qualified}({param}={default!r}) repeats {path}")
    assert not untied, "add these to TIED (or NOT_SETTINGS):\n" + "\n".join(untied)


def test_the_scan_sees_every_tied_function(library_defaults):
    seen = {q for q, _ in library_defaults}
    assert set(TIED) <= seen, sorted(set(TIED) - seen)


def test_dv_uniform_defaults_come_from_the_schema():
    from vcrbench.testsets import sampling

    assert sampling.DV_UNIFORM_DEFAULTS == schema.definition_defaults("dv_uniform_options")
    assert sampling.DV_UNIFORM_DEFAULTS["pilot_fraction"] == 0.1
    from vcrbench.testsets import sampling_stratified

    stratified = schema.definition_defaults("dv_stratified_options")
    assert sampling_stratified.STRATIFIED_DEFAULTS == stratified
    assert stratified["max_candidates"] == 10
    with pytest.raises(vcrbench.errors.ConfigError, match="no definition 'nope'"):
        schema.definition_defaults("nope")
