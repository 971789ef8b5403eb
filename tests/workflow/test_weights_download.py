"""The weights' way on a cluster (issue 27), through the workflow itself: the local rule
``fetch_weights`` really downloads a timm model's weights, from a stand-in Hugging Face Hub on
127.0.0.1 (tests/support/hub_server.py, ``HF_ENDPOINT`` pointing at it), into
``inference.weights_cache``; then, the server stopped and every internet connection of every
process refused, the ``predict_clean`` job reads them from the cache with the hubs offline (the
jobs' environment, ``vcrbench.plan.cluster.job_environment``) and predicts what the same state
dict predicts loaded from a file; and with the cache emptied the job fails saying which model's
weights are missing, where it looked and what to do; doing it fetches them again, into the same
record (so no finished job reruns). A ``checkpoint`` entry's url the same way, from a stand-in
file server (tests/support/file_server.py): downloaded by fetch_weights, read offline."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.support.file_server import FileServer
from tests.support.homes import written
from tests.support.hub_server import COMMIT, HubServer, no_network_site
from vcrbench.files import io
from vcrbench.plan import paths

from .conftest import snakemake, split_inference, write_config

#: timm's smallest ResNet (0.5 M parameters, 160 px): its weights are served from the test's hub.
ARCH = "test_resnet.r160_in1k"
REPO_ID = f"timm/{ARCH}"
MODEL = "tiny_resnet"


def served_weights(folder) -> tuple[bytes, bytes]:
    """``model.safetensors`` of a randomly initialised :data:`ARCH`, and its ``config.json``."""
    import safetensors.torch
    import timm
    import torch

    torch.manual_seed(0)
    net = timm.create_model(ARCH, pretrained=False)
    path = folder / "model.safetensors"
    safetensors.torch.save_file(net.state_dict(), str(path))
    config = {"architecture": ARCH.split(".")[0], "num_classes": 1000}
    return path.read_bytes(), json.dumps(config).encode()


def run_env(tmp_path, **extra) -> dict[str, str]:
    """The test's environment with HOME and TMPDIR of its own (nothing may land in the real
    ones), no variable of the hubs or proxies the machine may set, and ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HF_", "HUGGINGFACE_", "TORCH_")) and "proxy" not in k.lower()
    }
    for name in ("home", "tmp"):
        (tmp_path / name).mkdir(exist_ok=True)
    env |= {"HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path / "tmp")}
    env.pop("XDG_CACHE_HOME", None)
    return env | extra


def offline_env(tmp_path, endpoint: str) -> tuple[dict[str, str], Path]:
    """:func:`run_env` with every internet connection refused (a ``sitecustomize`` first on
    PYTHONPATH), proxies at a closed port and the hub's endpoint at the stopped server; and
    the log of the processes that loaded the block and of the connections they tried."""
    log = no_network_site(tmp_path / "no-network")
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens on it
    python_path = os.pathsep.join(p for p in (str(log.parent), os.environ.get("PYTHONPATH")) if p)
    proxies = {name: closed for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY")}
    return run_env(tmp_path, HF_ENDPOINT=endpoint, PYTHONPATH=python_path, **proxies), log


def fetch_online(tmp_path, work, config, target: str, files: dict[str, bytes]) -> HubServer:
    """Make ``target`` (a fetch record) in ``work`` with a stand-in hub serving ``files`` up
    while it runs; returns the (stopped) hub, with its requests."""
    with HubServer(files) as hub:
        env = run_env(
            tmp_path, HF_ENDPOINT=hub.endpoint, NO_PROXY="127.0.0.1", no_proxy="127.0.0.1"
        )
        proc = snakemake(work, "--cores", "1", target, configfile=config, env=env)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return hub


@pytest.mark.slow
def test_fetch_weights_downloads_then_inference_reads_the_cache_offline(tmp_path):
    from vcrbench.datasets.loading import CleanSet
    from vcrbench.inference import InferenceOptions, predict_clean
    from vcrbench.models import ModelSpec, load_model

    weights, config_json = served_weights(tmp_path)
    entry = {"source": "timm", "id": ARCH, "family": "supervised"}
    # predict_clean alone (inference split: no test set is made for it)
    inference = split_inference(weights_cache="weights-cache", device="cpu", save_logprobs=True)
    config = write_config(tmp_path / "config.yaml", models={MODEL: entry}, inference=inference)
    work = tmp_path / "run"
    work.mkdir()
    cache = work / "weights-cache"
    fetch_target = paths.fill(paths.WEIGHTS_FETCHED, model=MODEL)  # targets: relative to work
    clean_target = paths.fill(paths.PREDICTIONS_CLEAN, model=MODEL)
    fetched, clean = work / fetch_target, work / clean_target
    files = {f"{REPO_ID}/model.safetensors": weights, f"{REPO_ID}/config.json": config_json}

    # 1. fetch_weights, the hubs online (its rule's params) and the stand-in hub up
    hub = fetch_online(tmp_path, work, config, fetch_target, files)
    url = f"/{REPO_ID}/resolve/main/model.safetensors"
    # (huggingface_hub online also asks the hub's /api for its own registries: not weights)
    asked = [(m, p) for m, p in hub.requests if not p.startswith("/api/")]
    assert asked == [("HEAD", url), ("GET", url)], hub.requests
    repo = cache / "huggingface" / "hub" / f"models--{REPO_ID.replace('/', '--')}"
    snapshot = repo / "snapshots" / COMMIT / "model.safetensors"
    assert snapshot.read_bytes() == weights
    assert (repo / "refs" / "main").read_text() == COMMIT
    cached = {p.relative_to(cache).parts[:2] for p in cache.rglob("*") if p.is_file()}
    assert cached == {("huggingface", "hub")}, cached  # the hub's cache, nothing else
    assert not written(tmp_path / "home")  # the source cache goes under $TMPDIR
    assert yaml.safe_load(fetched.read_text())["id"] == ARCH
    record_time = fetched.stat().st_mtime_ns

    # 2. predict_clean, the server gone and no process able to open a connection
    env, network_log = offline_env(tmp_path, hub.endpoint)
    proc = snakemake(work, "--cores", "1", clean_target, configfile=config, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    log = network_log.read_text()
    assert log.count(" started") >= 2, log  # Snakemake and its job scripts ran blocked
    assert " connect " not in log, log  # and none of them tried to reach a server
    assert "rule fetch_weights" not in proc.stdout + proc.stderr  # fetched once, not again
    assert fetched.stat().st_mtime_ns == record_time
    assert not written(tmp_path / "home")  # the source cache goes under $TMPDIR

    # ... and predicted what the same state dict predicts, loaded from its file here
    reference = {**entry, "checkpoint": str(tmp_path / "model.safetensors")}
    spec = ModelSpec.from_config(MODEL, reference)
    clean_set = CleanSet.open(work / paths.CLEAN_IMAGES, work / paths.CLEAN_INDEX)
    expected = predict_clean(
        spec,
        clean_set,
        tmp_path / "expected.parquet",
        InferenceOptions(device="cpu", progress=False, save_logprobs=True),
        model=load_model(spec, "cpu"),
    )
    got, want = pd.read_parquet(clean), pd.read_parquet(expected)
    assert len(got) == len(clean_set.index) > 0
    ranks = [f"top{k}" for k in range(1, 6)]
    assert got[ranks].equals(want[ranks])
    probs = [*(f"{r}_prob" for r in ranks), "prob_label", "entropy"]  # float32 softmax
    np.testing.assert_allclose(got[probs].to_numpy(), want[probs].to_numpy(), rtol=1e-4)
    logprobs = io.fixed_size_matrix(clean, "logprobs").astype(np.float32)  # float16 log-softmax
    np.testing.assert_allclose(
        logprobs, io.fixed_size_matrix(expected, "logprobs").astype(np.float32), atol=1e-2
    )
    assert logprobs.std(axis=1).min() > 0  # real logits, not a constant

    # 3. the same job with the cache emptied: it fails naming the model, the cache and the fix
    shutil.rmtree(cache)
    proc = snakemake(work, "--cores", "1", "-f", clean_target, configfile=config, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    failed = f"vcrbench: job predict_clean (model={MODEL}) failed: WeightsUnavailableError: "
    line = next((x for x in out.splitlines() if x.startswith(failed)), None)
    assert line is not None, out[-5000:]
    assert f"model {MODEL!r}" in line and REPO_ID in line, line  # which model, which weights
    assert str(cache / "huggingface" / "hub") in line, line  # where the job looked
    assert f"delete {fetch_target} and make it alone again" in line, line  # and how
    assert " connect " not in network_log.read_text()

    # 4. what it says to do: the record made alone again, where the hub is, comes back the same
    # (so Snakemake, which compares a small input's checksum, reruns nothing for it)
    record = fetched.read_bytes()
    fetched.unlink()
    hub = fetch_online(tmp_path, work, config, fetch_target, files)
    assert ("GET", url) in hub.requests and snapshot.read_bytes() == weights
    assert fetched.read_bytes() == record


@pytest.mark.slow
def test_fetch_weights_downloads_a_checkpoint_url_then_inference_reads_it_offline(tmp_path):
    """A ``checkpoint`` entry with a url (docs/models.md, "Weights fetched by the workflow"):
    the file is not there, and the plan does not stop for it; the rule fetch_weights downloads
    it from a stand-in server into the entry's path, checks and records its sha256; then, the
    server stopped and every connection refused, predict_clean reads it."""
    weights, _ = served_weights(tmp_path)
    sha = hashlib.sha256(weights).hexdigest()
    # predict_clean alone (inference split: no test set is made for it)
    inference = split_inference(weights_cache="weights-cache", device="cpu")
    work = tmp_path / "run"
    work.mkdir()
    fetch_target = paths.fill(paths.WEIGHTS_FETCHED, model=MODEL)
    clean_target = paths.fill(paths.PREDICTIONS_CLEAN, model=MODEL)
    with FileServer({"/releases/tiny.safetensors": weights}) as server:
        entry = {
            "source": "checkpoint",
            "library": "timm",
            "id": ARCH,
            "checkpoint": "models/tiny.safetensors",
            "url": f"{server.url}/releases/tiny.safetensors",
            "sha256": sha,
        }
        config = write_config(tmp_path / "config.yaml", models={MODEL: entry}, inference=inference)
        env = run_env(tmp_path, NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
        proc = snakemake(work, "--cores", "1", fetch_target, configfile=config, env=env)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    assert server.requests == [("GET", server.address, "/releases/tiny.safetensors")]
    assert (work / "models" / "tiny.safetensors").read_bytes() == weights
    assert json.loads((work / fetch_target).read_text())["sha256"] == f"sha256:{sha}"

    env, network_log = offline_env(tmp_path, "http://127.0.0.1:9")
    proc = snakemake(work, "--cores", "1", clean_target, configfile=config, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    assert "rule fetch_weights" not in proc.stdout + proc.stderr  # fetched once, not again
    assert " connect " not in network_log.read_text()
    assert len(pd.read_parquet(work / clean_target)) > 0
