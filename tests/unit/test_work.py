"""The plan's estimate for each job and the time limit its first attempt asks for (issue 27):
each job is sized from its own images and model, and asks for twice its estimate in whole minutes;
single-threaded CPU jobs take the one cpu_slot of a group job."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from vcrbench import plan
from vcrbench.plan import resources, work


def config(**changes) -> dict:
    cfg = {
        "dataset": {"kind": "embedded"},
        "corruptions": {"gaussian_noise": {}, "brightness": {"n_samples": 2500}},
        "sampling": {"mode": "parameter-uniform", "n_samples": 5000, "shard_size": 1000},
        "imagenet_c": {"enabled": True, "n_images": 10},
        "inference": {"shards_per_job": 2, "device": "cuda"},
        "models": {
            "r50": {"source": "timm", "id": "resnet50.a1_in1k"},
            "big": {"source": "timm", "id": "no_such_arch", "resources": {"params_m": 500}},
            "fixed": {"source": "timm", "id": "resnet18", "resources": {"runtime": 30}},
        },
    }
    cfg.update(changes)
    return plan.validate(cfg)


def job(**wildcards):
    return SimpleNamespace(**wildcards)


def test_each_job_counts_its_own_images():
    cfg = config()
    # 5,000 samples in 5 shards, 2 to a group: 2,000, 2,000, then the last group holds 1,000
    groups = [
        work.job_images(cfg, "predict_group", job(corruption="gaussian_noise", group=g), 10)
        for g in ("00000", "00001", "00002")
    ]
    assert groups == [2000, 2000, 1000]
    # brightness has 2,500 samples: its last shard holds 500
    assert work.job_images(cfg, "generate_shard", job(corruption="brightness", shard="00002"), 10) == 500
    assert work.job_images(cfg, "generate_shard", job(corruption="brightness", shard="00000"), 10) == 1000
    assert work.job_images(cfg, "predict_clean", job(model="r50"), 10) == 10
    # ImageNet-C: 10 images x 5 severities = 50 samples, one shard
    ic = job(corruption="gaussian_noise", group="00000", shard="00000")
    assert work.job_images(cfg, "predict_imagenet_c", ic, 10) == 50
    assert work.job_images(cfg, "generate_imagenet_c", ic, 10) == 50


def test_rates_are_published_or_assumed_from_parameters_and_cpu_is_slower():
    cfg = config()
    published = work.figures("gpu_throughput")["architectures"]["resnet50"]
    assert work.inference_rate(cfg, "r50") == (pytest.approx(published), "published")
    assert work.inference_rate(cfg, "big") == (pytest.approx(2000 * 25 / 500), "assumed")
    cpu = config(inference={"shards_per_job": 2, "device": "cpu"})
    assert work.inference_rate(cpu, "r50")[0] == pytest.approx(published / work.CPU_SLOWDOWN)


def test_an_estimate_is_start_up_plus_images_at_their_cost():
    cfg = config()
    wc = job(model="r50", corruption="gaussian_noise", group="00000")
    rate, _ = work.inference_rate(cfg, "r50")
    assert work.job_seconds(cfg, "predict_group", wc, 10) == pytest.approx(
        work.startup_seconds("predict") + 2000 / rate
    )
    ms = work.figures("generation")["corruptions"]["gaussian_noise"]["ms_per_image"]
    shard = job(corruption="gaussian_noise", shard="00000")
    assert work.job_seconds(cfg, "generate_shard", shard, 10) == pytest.approx(
        work.startup_seconds("generate") + 1000 * ms / 1e3
    )
    # a corruption that was not measured is costed at the slowest one that was
    slowest = max(c["ms_per_image"] for c in work.figures("generation")["corruptions"].values())
    assert work.generation_ms_per_image("not_measured") == slowest
    assert work.job_seconds(cfg, "collect_metrics", job(), 10) is None


@pytest.mark.parametrize("seconds", [1.0, 29.0, 31.0, 59.9, 61.0, 600.0, 12345.0])
def test_a_request_is_twice_the_estimate_in_whole_minutes(seconds):
    minutes = work.request_minutes(seconds)
    assert minutes == max(1, math.ceil(2 * seconds / 60))
    assert 60 * minutes >= 2 * seconds and 60 * minutes < 2 * seconds + 60 or minutes == 1


def test_first_attempts_ask_for_twice_the_estimate_and_retries_grow():
    cfg = config(limits={"max_runtime": 100000, "max_mem_mb": 10**6})
    p = plan.Plan(cfg)
    for rule, wc in (
        ("predict_group", job(model="r50", corruption="gaussian_noise", group="00001")),
        ("predict_imagenet_c", job(model="big", corruption="brightness", group="00000")),
        ("predict_clean", job(model="r50")),
        ("generate_shard", job(corruption="brightness", shard="00002")),
        ("generate_imagenet_c", job(corruption="gaussian_noise", shard="00000")),
    ):
        runtime = p.resources(rule)["runtime"]
        estimate = work.job_seconds(cfg, rule, wc, p.clean_images)
        assert runtime(wc, 1) == work.request_minutes(estimate), rule
        assert [runtime(wc, a) for a in (1, 2, 3)] == [runtime(wc, 1) * a for a in (1, 2, 3)]
    # a model whose entry sets its runtime keeps it (per group of shards_per_job shards)
    fixed = job(model="fixed", corruption="gaussian_noise", group="00000")
    assert p.resources("predict_group")["runtime"](fixed, 1) == 30


def test_single_threaded_cpu_jobs_take_the_group_jobs_one_cpu_slot():
    p = plan.Plan(config())
    for rule in resources.SLOT_RULES:
        assert p.resources(rule)["cpu_slot"] == 1, rule
    for rule in ("predict_group", "prepare_clean_set", "collect_metrics"):
        assert "cpu_slot" not in p.resources(rule), rule


def test_a_model_with_few_images_is_predicted_in_one_job():
    """``inference.model_job_max_images``: a model's clean set, test sets and ImageNet-C sets in
    one job (rule predict_model) when they number at most that, else one job per set and
    group; the one job's outputs are every prediction file of the model, each paired with the
    shards it is predicted from."""
    # 10 clean images, 5,000 + 2,500 samples, 2 x 50 ImageNet-C samples
    cfg = config(inference={"shards_per_job": 2, "device": "cuda", "model_job_max_images": 7610})
    assert work.model_images(cfg, 10) == 10 + 7500 + 100
    assert work.job_images(cfg, "predict_model", job(model="r50"), 10) == 7610
    assert work.inference_per_model(cfg, 10)
    inference = {"shards_per_job": 2, "device": "cuda", "model_job_max_images": 7609}
    assert not work.inference_per_model(config(inference=inference), 10)
    assert not work.inference_per_model(config(), 10)  # the default, 0: always split
    p = plan.Plan(cfg)
    assert p.inference_per_model
    outputs = p.model_job_outputs()
    assert outputs[0] == "results/predictions/{model}/clean.parquet"
    assert sorted(outputs) == sorted(
        f.replace("/r50/", "/{model}/") for f in p.prediction_files() if "/r50/" in f
    )
    inputs = p.model_job_inputs(job(model="r50"))
    assert inputs["images"] == "results/dataset/images.npy"
    assert inputs["weights"] == p.model_weights(job(model="r50"))
    for i, out in enumerate(outputs[1:], start=1):
        wildcards = job(corruption=out.split("/")[-2], group=out.split("group-")[1][:5])
        if "/imagenet-c/" in out:
            expected = p.imagenet_c_group_shard_files(wildcards)
        else:
            expected = p.group_shard_files(wildcards)
        assert inputs[f"shards_{i}"] == expected, out
    assert set(inputs) == {"images", "index", "weights"} | {
        f"shards_{i}" for i in range(1, len(outputs))
    }
    # the inference job's resources: one GPU, sized from all its images
    res = p.resources("predict_model")
    assert res["gpu"] == 1
    split = plan.Plan(config(inference=inference))
    assert res["runtime"](job(model="r50"), 1) >= split.resources("predict_group")["runtime"](
        job(model="r50", corruption="gaussian_noise", group="00000"), 1
    )
