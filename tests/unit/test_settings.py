"""Typed settings (:mod:`vcrbench.settings`): the ``vif`` block as one frozen ``VifSettings`` and
the estimator's keys of the ``estimation`` block as one ``EstimationSettings``, the recipe "Add a
setting" of docs/architecture.md followed with a toy setting, and the scan that counts the
library's keyword defaults named like a config key (``tools/setting_defaults.py``).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys

import numpy as np
import pytest

from tests.support.shipped import REPO
from vcrbench import plan, schema
from vcrbench.api.stages import manifest_params, mapping_params, shard_params
from vcrbench.corruptions import get_corruption
from vcrbench.errors import ConfigError
from vcrbench.files import io
from vcrbench.files.provenance import config_hash
from vcrbench.plan import config as cfg
from vcrbench.settings import EstimationSettings, HumanMappingSettings, TableSettings, VifSettings
from vcrbench.testsets import measure, sampling, testset


def _config(vif_block=None) -> dict:
    return {
        "dataset": {"kind": "embedded"},
        "corruptions": {"brightness": {}},
        "vif": dict(vif_block or {}),
        "models": {"m": {"source": "timm", "id": "resnet18"}},
    }


def test_every_key_of_the_vif_block_is_a_field_and_reaches_the_jobs_by_its_name():
    keys = set(schema.schema()["properties"]["vif"]["properties"])
    assert keys == {f.name for f in dataclasses.fields(VifSettings)}
    config = plan.validate(_config({"grey": "uint8", "variant": "vifvec"}))
    p = plan.Plan(config)
    for params in (manifest_params(p, "brightness"), shard_params(p, "brightness")):
        assert (
            VifSettings.of_job(params) == VifSettings("vifvec", "uint8") == cfg.vif_settings(config)
        )
    # a field other than variant travels under its own name: no other param of those rules has it
    others = set(manifest_params(p, "brightness")) - set(cfg.measurement_params(config))
    assert not (keys - {"variant"}) & others
    # the human conditions are measured as the test sets are: same variant, same grey conversion
    refs = {"noise": {"kind": "geirhos2018", "experiment": "noise"}}
    config = plan.validate({**config, "humans": {"references": refs}})
    mapping = mapping_params(plan.Plan(config), "noise")
    assert VifSettings.of_job(mapping) == VifSettings("vifvec", "uint8")


def test_the_defaults_are_the_schemas_and_not_filled_in():
    assert schema.default_of("vif.grey") == VifSettings().grey == "float"
    assert schema.default_of("vif.variant") == VifSettings().variant
    assert schema.default_of("dataset.stored_max_side") == 512
    assert schema.default_of("dataset.resolution") == "crop"
    config = plan.validate(_config())
    assert "grey" not in config["vif"] and cfg.grey(config) == "float"
    with pytest.raises(ConfigError, match="'vif.nope': not in the schema"):
        schema.default_of("vif.nope")
    with pytest.raises(ConfigError, match="'models': the schema gives it no default"):
        schema.default_of("models")


# ------------------------------------------------------------------ the recipe, with a toy setting

TOY = {
    "type": "number",
    "minimum": 0,
    "absent_default": 1.0,
    "description": "A toy gain on every dv (the recipe's test).",
}


@pytest.fixture
def toy_schema(monkeypatch):
    """1. schema: ``vif.toy_gain``, a number whose default (1, today's dv) is not filled in."""
    full = schema.schema()
    full["properties"]["vif"]["properties"]["toy_gain"] = TOY
    monkeypatch.setattr(schema, "_load", lambda path: full)
    return full


def _toy_settings():
    """2. field: the settings class gains ``toy_gain``, its default read from the schema."""

    @dataclasses.dataclass(frozen=True)
    class ToySettings(VifSettings):
        toy_gain: float = schema.default_of("vif.toy_gain")

    return ToySettings


def _toy_use(monkeypatch):
    """3. use: the measurement reads it (here: dv times the gain, a stand-in for a real use)."""
    real = measure.visual_change
    seen = []

    def visual_change(clean, corrupted, vif_settings, device=None):
        seen.append(vif_settings.toy_gain)
        plain = VifSettings(vif_settings.variant, vif_settings.grey)
        vif, dv = real(clean, corrupted, plain, device)
        return vif, np.clip(dv * vif_settings.toy_gain, 0.0, 1.0)

    monkeypatch.setattr(measure, "visual_change", visual_change)
    return seen


def test_a_toy_setting_is_schema_field_and_use(toy_schema, monkeypatch, clean_set, tmp_path):
    before = config_hash(shard_params(plan.Plan(plan.validate(_config())), "brightness"))
    Toy = _toy_settings()
    seen = _toy_use(monkeypatch)
    # validated by the schema, named by its key
    with pytest.raises(ConfigError, match="config key 'vif.toy_gain': -1 is less than the minimum"):
        plan.validate(_config({"toy_gain": -1}))
    # left out: the jobs' params (and hashes) are what they were before the key existed
    absent = plan.validate(_config())
    assert "toy_gain" not in absent["vif"]
    params = shard_params(plan.Plan(absent), "brightness")
    assert config_hash(params) == before and Toy.of_job(params).toy_gain == 1.0
    # given: the rule's params carry it, the job types it, the stage function gets it
    given = plan.validate(_config({"toy_gain": 0.5}))
    params = shard_params(plan.Plan(given), "brightness")
    assert params["toy_gain"] == 0.5 and config_hash(params) != before
    settings = Toy.of_job(params)
    assert settings == Toy(toy_gain=0.5)

    c = get_corruption("brightness")
    manifest = sampling.make_manifest(c, clean_set, 4, 4, seed=0, mode="parameter-uniform")
    plain = testset.generate_shard(manifest, 0, clean_set, c, tmp_path / "plain.parquet", Toy())
    toy = testset.generate_shard(manifest, 0, clean_set, c, tmp_path / "toy.parquet", settings)
    assert seen == [1.0, 0.5]  # one batch each: the schema's default, then the config's value
    dv, dv_toy = io.read_parquet(plain)["dv"], io.read_parquet(toy)["dv"]
    assert dv.max() > 0 and np.allclose(dv_toy, 0.5 * dv)
    assert io.read_metadata(toy)["toy_gain"] == 0.5 and "toy_gain" not in io.read_metadata(plain)


# ------------------------------------------------------------------ humans.mapping


def test_human_mapping_settings_are_the_blocks_with_the_schemas_defaults():
    keys = set(schema.schema()["properties"]["humans"]["properties"]["mapping"]["properties"])
    assert keys == {f.name for f in dataclasses.fields(HumanMappingSettings)}
    config = plan.validate(_config())
    assert dataclasses.asdict(HumanMappingSettings()) == config["humans"]["mapping"]
    assert HumanMappingSettings.of_config({}) == HumanMappingSettings()
    # a reference's own mapping overrides the block's keys; the job's param stays a plain mapping
    refs = {"noise": {"kind": "geirhos2018", "experiment": "noise", "mapping": {"draws": 2}}}
    config = plan.validate(
        {**_config(), "humans": {"mapping": {"n_images": 9}, "references": refs}}
    )
    params = mapping_params(plan.Plan(config), "noise")
    assert params["mapping"] == {**config["humans"]["mapping"], "draws": 2}
    want = HumanMappingSettings(n_images=9, draws=2)
    assert HumanMappingSettings.of_config(params["mapping"]) == want
    assert VifSettings.of_job(params) == VifSettings()


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("reference", "grey", "reference must be one of"),
        ("draws", 0, "draws must be at least 1"),
        ("n_images", 0, "n_images must be at least 1"),
        ("lowpass_sigma_scale", 0.0, "lowpass_sigma_scale must be positive"),
        ("jpeg_quality", 101, r"jpeg_quality must be in \[1, 100\]"),
    ],
)
def test_human_mapping_settings_reject_what_the_schema_rejects(field, value, match):
    with pytest.raises(ValueError, match=match):
        HumanMappingSettings(**{field: value})
    config = _config()
    config["humans"] = {"mapping": {field: value}}
    with pytest.raises(ConfigError, match=f"humans.mapping.{field}"):
        plan.validate(config)


# ------------------------------------------------------------------ the scan


def _scan_module():
    spec = importlib.util.spec_from_file_location(
        "setting_defaults", REPO / "tools" / "setting_defaults.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("setting_defaults", module)
    spec.loader.exec_module(module)
    return module


def test_the_scan_counts_defaults_named_like_a_key(tmp_path):
    scan = _scan_module()
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "m.py").write_text(
        "def f(x, grey='float', n_bins=40, seed=None, other=3, *, variant='kumar', bins=None):\n"
        "    pass\n"
        "class C:\n"
        "    def g(self, seed=1): pass\n"
    )
    found = scan.setting_defaults(package, {"grey", "bins", "seed", "variant"})
    assert [line.split(" ", 1)[1] for line in found] == [
        "f(grey='float')", "f(n_bins=40)", "f(variant='kumar')", "g(seed=1)",
    ]  # fmt: skip
    assert {"grey", "variant", "stored_max_side", "resolution"} <= scan.schema_names()


def test_no_library_default_repeats_a_vif_or_stored_resolution_setting():
    """The measurement's settings are written in the schema and VifSettings only (``vif.vif``'s
    ``variant`` default is read from them); the humans stage takes a VifSettings too."""
    found = _scan_module().setting_defaults()
    keys = ("vif_variant", "grey", "resolution", "stored_max_side")
    assert [line for line in found if line.split("(", 1)[1].split("=")[0] in keys] == []
    assert [line.split(" ", 1)[1] for line in found if "(variant=" in line] == [
        "vif(variant=DEFAULT.variant)"
    ]


# ------------------------------------------------------------------ the estimation block, typed

#: The ``estimation`` block's keys other stages read (the outcomes, the similarity test, the
#: label spaces): no field of the estimator's settings.
NOT_THE_ESTIMATORS = {
    "decision16", "similarity_level", "similarity_band", "short_label_space", "label_spaces",
}  # fmt: skip


def test_the_estimators_keys_are_fields_with_the_schemas_defaults():
    keys = set(schema.schema()["properties"]["estimation"]["properties"])
    fields = {f.name: f.default for f in dataclasses.fields(EstimationSettings)}
    assert set(fields) == keys - NOT_THE_ESTIMATORS
    assert fields == {key: schema.default_of(f"estimation.{key}") for key in fields}
    assert EstimationSettings().bins == 40 and EstimationSettings().n_boot == 200


def test_estimation_settings_of_a_config_block():
    block = plan.validate(_config())["estimation"]
    assert EstimationSettings.of_config(block) == EstimationSettings()
    given = {"bins": 20, "n_boot": 7, "spline": "quantile", "anchor1": "chance", "lam": 0.5}
    settings = EstimationSettings.of_config({**given, "decision16": "sum", "label_spaces": []})
    assert settings == EstimationSettings(**given)
    assert settings.min_count == EstimationSettings().min_count  # left out: the schema's


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"spline": "cobs"}, "spline must be one of"),
        ({"small_sample": "z"}, "small_sample must be one of"),
        ({"bootstrap_penalty": "sometimes"}, "bootstrap_penalty must be one of"),
        ({"empty_bins": "previous"}, "empty_bins must be one of"),
        ({"bins": 1}, "at least 2"),
        ({"n_boot": -1}, "n_boot must be >= 0"),
        ({"level": 1.0}, "level must lie in"),
        ({"anchor1": 1.5}, "anchor1 must be None, a number in"),
        ({"anchor1": "guess"}, "anchor1 must be None, a number in"),
    ],
)
def test_estimation_settings_refuse_what_the_estimator_cannot_take(bad, message):
    with pytest.raises(ValueError, match=message):
        EstimationSettings(**bad)


def test_chance_is_resolved_per_label_space_and_nothing_else_is():
    settings = EstimationSettings(anchor1="chance", n_boot=3)
    resolved = settings.for_label_space("geirhos16", anchor0=0.9)
    assert resolved == dataclasses.replace(settings, anchor1=1 / 16)
    assert resolved.for_label_space("imagenet1k") is resolved  # a number stays
    assert EstimationSettings().for_label_space(None) == EstimationSettings()


# ------------------------------------------------------------------ the tables' settings


def test_table_settings_are_the_figures_blocks_table_keys_with_the_schemas_defaults():
    figures = schema.schema()["properties"]["figures"]["properties"]
    assert {f.name for f in dataclasses.fields(TableSettings)} <= set(figures)
    assert TableSettings() == TableSettings(
        schema.default_of("figures.digits"),
        schema.default_of("figures.label_space"),
        schema.default_of("figures.leaderboard_sort"),
    )
    block = plan.validate({**_config(), "figures": {"digits": 2, "leaderboard_sort": "HMRI_a"}})
    assert TableSettings.of_config(block["figures"]) == TableSettings(2, "dataset", "HMRI_a")
    # a key the block leaves out: the schema's default (the figures' style keys are not read)
    assert TableSettings.of_config({"dpi": 300}) == TableSettings()
    with pytest.raises(ValueError, match="leaderboard_sort must be one of"):
        TableSettings(leaderboard_sort="R_x")
    with pytest.raises(ValueError, match=r"digits must be in \[0, 10\], not 11"):
        TableSettings(digits=11)
    with pytest.raises(ValueError, match="digits must be an integer, not 2.5"):
        TableSettings(digits=2.5)


# ------------------------------------------------------------------ the dataset block


def test_the_dataset_settings_are_the_schemas_and_checked():
    from vcrbench.settings import DatasetSettings

    keys = set(schema.schema()["properties"]["dataset"]["properties"]) - {"zero_shot"}
    assert keys == {f.name for f in dataclasses.fields(DatasetSettings)}
    default = DatasetSettings()
    for key in keys:
        want = schema.default_of(f"dataset.{key}")
        assert getattr(default, key) == (tuple(want) if isinstance(want, list) else want), key
    assert default.view == (256, 224) and not default.stored
    for bad, message in (
        ({"on_error": "ignore"}, r"dataset on_error must be one of \['raise', 'skip'\]"),
        ({"split": "val"}, r"dataset split must be one of \['all', 'train', 'test'\]"),
        ({"resolution": "full"}, r"dataset resolution must be one of \['crop', 'stored'\]"),
        ({"crop": 300}, r"crop \(300\) must be in \[1, resize \(256\)\]"),
        ({"limit": 0}, "limit must be at least 1 or None, not 0"),
    ):
        with pytest.raises(ValueError, match=message):
            DatasetSettings(**bad)


def test_the_dataset_settings_of_a_validated_block_and_of_the_rules_param():
    from vcrbench.settings import DatasetSettings

    given = {"resize": 300, "crop": 256, "exclude": ["a", "b"], "resolution": "stored"}
    config = plan.validate({**_config(), "dataset": {"kind": "embedded", **given}})
    settings = DatasetSettings.of_config(config["dataset"])
    assert settings == DatasetSettings(
        resize=300, crop=256, exclude=("a", "b"), resolution="stored"
    )
    assert settings.stored and settings.stored_max_side == 512  # left out: the schema's
    # the rule prepare_clean_set's param is the validated block: the same value
    params = plan.Plan(config).section("dataset")
    assert DatasetSettings.of_config(params) == settings
    # a key the block leaves out keeps its default; zero_shot is no field of it
    assert DatasetSettings.of_config({"zero_shot": None}) == DatasetSettings()
