"""The cost plan's arithmetic: images per output, architectures, unknown figures, job stats."""

from __future__ import annotations

import math

import pytest
import yaml

from vcrbench import plan
from vcrbench.plan import cost, work

STATS = """Building DAG of jobs...
Job stats:
job                  count
-----------------  -------
generate_shard           6
predict_group            4
all                      1
total                   11

Job stats:
job                  count
-----------------  -------
generate_shard           6
"""


def config(**changes):
    base = {
        "dataset": {"kind": "embedded"},
        "corruptions": {"gaussian_noise": {}, "brightness": {"n_samples": 30}, "blur": {}},
        "sampling": {"mode": "parameter-uniform", "n_samples": 24, "shard_size": 8},
        "imagenet_c": {"enabled": True, "n_images": 3},
        "models": {
            "a": {"source": "timm", "id": "resnet18.fb_swsl_ig1b_ft_in1k"},
            "b": {"source": "torchvision", "id": "alexnet"},
        },
        "estimation": {"n_boot": 10},
    }
    base.update(changes)
    return plan.validate(yaml.safe_load(yaml.safe_dump(base)))


def test_job_stats_are_read_from_the_first_table():
    assert cost.parse_job_stats(STATS) == {"generate_shard": 6, "predict_group": 4, "all": 1}
    with pytest.raises(ValueError, match="Job stats"):
        cost.parse_job_stats("Nothing to be done.")


def test_images_per_output_follow_the_config():
    counts = cost.image_counts(config(), n_clean=10)
    vcr = counts[counts["kind"] == "vcr"].set_index("corruption")["images"]
    assert vcr.to_dict() == {"gaussian_noise": 24, "brightness": 30, "blur": 24}
    inc = counts[counts["kind"] == "imagenet-c"].set_index("corruption")["images"]
    # blur has no ImageNet-C severities; the others: 5 severities x 3 images.
    assert inc.to_dict() == {"gaussian_noise": 15, "brightness": 15}
    everything = cost.image_counts(config(imagenet_c={"enabled": True}), n_clean=10)
    assert set(everything.loc[everything["kind"] == "imagenet-c", "images"]) == {50}
    off = cost.image_counts(config(imagenet_c={"enabled": False}), n_clean=10)
    assert (off["kind"] == "vcr").all()


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"source": "timm", "id": "resnet18.fb_swsl_ig1b_ft_in1k"}, "resnet18"),
        ({"source": "torchvision", "id": "resnet50", "weights": "x"}, "resnet50"),
        ({"source": "checkpoint", "library": "timm", "id": "convnext_large"}, "convnext_large"),
        ({"source": "clip", "id": "ViT-B-32-quickgelu"}, "vit_b32"),
        ({"source": "checkpoint", "library": "python", "id": "m:f"}, "checkpoint:m:f"),
    ],
)
def test_model_entries_map_to_architectures(entry, expected):
    aliases = {"clip:ViT-B-32-quickgelu": "vit_b32"}
    assert work.architecture(entry, aliases) == expected


def test_costs_use_the_figures_and_leave_unknowns_unknown():
    generation = {
        "corruptions": {
            "gaussian_noise": {"ms_per_image": 20.0, "kib_per_image": 100.0},
            "brightness": {"ms_per_image": 10.0, "kib_per_image": 50.0},
        }
    }
    gpu = {"architectures": {"resnet18": 1000.0}, "aliases": {}}
    estimates = {"fixed_kib": 80.0, "per_replicate_kib": 0.5}
    tables = cost.plan_cost(
        config(), {"generate_shard": 9}, generation, gpu, 10, 66, estimates=estimates
    )
    gen = tables["generation"].set_index(["kind", "corruption"])
    assert gen.loc[("vcr", "gaussian_noise"), "core_hours"] == pytest.approx(24 * 20 / 3.6e6)
    assert gen.loc[("imagenet-c", "brightness"), "disk_gib"] == pytest.approx(15 * 50 / 2**20)
    assert math.isnan(gen.loc[("vcr", "blur"), "core_hours"])  # no figure for blur
    per_model = 10 + 24 + 30 + 24 + 15 + 15
    gpus = tables["gpu"].set_index("model")
    assert gpus.loc["a", "gpu_hours"] == pytest.approx(per_model / 1000 / 3600)
    assert math.isnan(gpus.loc["b", "gpu_hours"])
    disk = tables["disk"].set_index("output")["gib"]
    assert disk["predictions (all models)"] == pytest.approx(2 * per_model * 66 / 2**30)
    assert disk["estimates (all models)"] == pytest.approx(2 * 3 * (80 + 0.5 * 10) / 2**20)
    assert disk["clean set (uint8 array)"] == pytest.approx(10 * 224 * 224 * 3 / 2**30)
    text = cost.report(tables, ["a note"])
    assert "no generation figures for: blur" in text
    assert "no published throughput for: b" in text
    assert "- a note" in text
