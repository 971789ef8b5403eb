"""``fetch_weights`` downloads every source's weights (issue 36): torchvision's from their URL,
torch.hub's repository and the weights its entry point downloads, open_clip's from the Hugging
Face Hub; then, with no network, the model is built from what was fetched, and only from that.
(timm's and a checkpoint url's: tests/workflow/test_weights_download.py, through the workflow.)

The hosts are stand-ins on 127.0.0.1 (tests/support): torchvision and torch.hub reach them through
urllib's own opener (:mod:`tests.support.urllib_stand_in`), open_clip through ``HF_ENDPOINT``.
"""

from __future__ import annotations

import hashlib
import io as bytes_io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch

from tests.support.file_server import FileServer
from tests.support.hub_server import HubServer, no_network_site
from tests.support.urllib_stand_in import urllib_offline, urllib_through
from tests.unit.test_models import TINY_CLIP
from vcrbench.errors import WeightsUnavailableError
from vcrbench.models import ModelSpec, load_model
from vcrbench.models.fetch import fetch_weights
from vcrbench.plan import cluster

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def jobs_env(tmp_path, monkeypatch):
    """The weights cache and the environment a job has (``cluster.job_environment``), in this
    process; returns the cache."""
    cache = tmp_path / "weights-cache"
    config = {"inference": {"weights_cache": str(cache)}}
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    for key, value in cluster.job_environment(config).items():
        monkeypatch.setenv(key, value)
    return cache


def state_bytes(net: torch.nn.Module) -> tuple[bytes, str]:
    """``net``'s state dict as torch.save writes it, and the first 8 hex digits of its sha256
    (the hash prefix torch.hub's ``check_hash`` wants in the file name)."""
    buffer = bytes_io.BytesIO()
    torch.save(net.state_dict(), buffer)
    data = buffer.getvalue()
    return data, hashlib.sha256(data).hexdigest()[:8]


def same_weights(net: torch.nn.Module, reference: torch.nn.Module) -> bool:
    want = reference.state_dict()
    got = net.state_dict()
    return got.keys() == want.keys() and all(torch.equal(got[k], want[k]) for k in want)


def test_torchvision_weights_come_from_their_url_then_from_the_cache_offline(
    jobs_env, tmp_path, monkeypatch
):
    import torchvision

    torch.manual_seed(0)
    served = torchvision.models.squeezenet1_1()
    data, prefix = state_bytes(served)
    member = torchvision.models.SqueezeNet1_1_Weights.IMAGENET1K_V1
    name = f"squeezenet1_1-{prefix}.pth"  # torchvision checks the file's hash against its name
    entry = {"source": "torchvision", "id": "squeezenet1_1", "weights": "IMAGENET1K_V1"}
    with FileServer({f"/models/{name}": data}) as server:
        # the weights' URL at the stand-in, as download.pytorch.org serves it
        monkeypatch.setattr(member.value, "url", f"{server.url}/models/{name}")
        record = fetch_weights("squeezenet", entry, jobs_env, tmp_path / "fetched.json")
    assert server.requests == [("GET", server.address, f"/models/{name}")]
    assert (jobs_env / "torch" / "hub" / "checkpoints" / name).read_bytes() == data
    assert record == json.loads((tmp_path / "fetched.json").read_text())
    assert record["source"] == "torchvision" and record["id"] == "squeezenet1_1"

    with urllib_offline():  # the server is gone, and so is the network
        model = load_model(ModelSpec.from_config("squeezenet", entry), "cpu")
    assert same_weights(model.net, served)


HUBCONF = '''\
dependencies = ["torch"]

import torch


def tinynet(pretrained=True, num_classes=1000):
    """A pooled linear classifier, its weights from the repository's release."""
    net = torch.nn.Sequential(
        torch.nn.AdaptiveAvgPool2d(2), torch.nn.Flatten(), torch.nn.Linear(12, num_classes)
    )
    if pretrained:
        state = torch.hub.load_state_dict_from_url({url!r}, progress=False, check_hash=True)
        net.load_state_dict(state)
    return net
'''


def tiny_net() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.AdaptiveAvgPool2d(2), torch.nn.Flatten(), torch.nn.Linear(12, 1000)
    )


def zipball(top: str, files: dict[str, str]) -> bytes:
    """A repository's archive as GitHub's zipball has it: everything under one top folder."""
    buffer = bytes_io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{top}/", "")  # the folder's own entry first (torch.hub reads it)
        for path, text in files.items():
            archive.writestr(f"{top}/{path}", text)
    return buffer.getvalue()


def test_torch_hub_repository_and_its_weights_downloaded_then_loaded_offline(jobs_env, tmp_path):
    """The entry as config/paper.yaml's DINOv2 has it: a GitHub ``owner/name`` without a ref
    (torch.hub asks GitHub whether ``main`` exists), an entry point that downloads weights."""
    torch.manual_seed(0)
    served = tiny_net()
    data, prefix = state_bytes(served)
    weights_path = f"/releases/tinynet-{prefix}.pth"
    entry = {"source": "hub", "repo": "vcr-standin/tinynet", "id": "tinynet"}
    with FileServer() as server:
        hubconf = HUBCONF.format(url=f"https://github.com{weights_path}")
        server.files |= {
            "/vcr-standin/tinynet/tree/main/": b"<html>main</html>",
            "/vcr-standin/tinynet/zipball/main": zipball(
                "vcr-standin-tinynet-0123abc", {"hubconf.py": hubconf}
            ),
            weights_path: data,
        }
        with urllib_through(server.address):
            fetch_weights("tinynet", entry, jobs_env, tmp_path / "fetched.json")
    asked = [(host, path) for _, host, path in server.requests]
    assert asked == [
        ("github.com", "/vcr-standin/tinynet/tree/main/"),
        ("github.com", "/vcr-standin/tinynet/zipball/main"),
        ("github.com", weights_path),
    ]
    hub = jobs_env / "torch" / "hub"
    assert (hub / "vcr-standin_tinynet_main" / "hubconf.py").read_text() == hubconf
    assert (hub / "checkpoints" / f"tinynet-{prefix}.pth").read_bytes() == data

    with urllib_offline():  # GitHub unreachable: torch.hub falls back on the cached main
        model = load_model(ModelSpec.from_config("tinynet", entry), "cpu")
    assert same_weights(model.net, served)
    assert model.label_space.num_classes == 1000


#: A CLIP small enough to serve, in open_clip's own config format (``open_clip_config.json``).
CLIP_CONFIG = TINY_CLIP
CLIP_REPO = "vcr-standin/tiny-clip"

#: In a fresh process (the hub library reads HF_ENDPOINT and HF_HUB_OFFLINE when imported):
#: fetch or load the entry, then print a checksum of the built image tower's weights.
CLIP_SCRIPT = """\
import json, sys
from vcrbench.models import ModelSpec, load_model
from vcrbench.models.fetch import fetch_weights
entry = json.loads(sys.argv[2])
if sys.argv[1] == "fetch":
    fetch_weights("tiny_clip", entry, sys.argv[3], sys.argv[4])
model = load_model(ModelSpec.from_config("tiny_clip", entry), "cpu")
print("checksum", float(sum(p.detach().double().sum() for p in model.net.visual.parameters())))
"""


def served_clip(folder: Path) -> tuple[bytes, float]:
    """The tiny CLIP's ``open_clip_pytorch_model.bin`` and the checksum of its image tower."""
    import open_clip

    torch.manual_seed(0)
    net = open_clip.model.CLIP(**CLIP_CONFIG["model_cfg"])
    path = folder / "open_clip_pytorch_model.bin"
    torch.save(net.state_dict(), path)
    return path.read_bytes(), float(sum(p.detach().double().sum() for p in net.visual.parameters()))


def run_clip(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", CLIP_SCRIPT, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_open_clip_weights_from_the_hub_then_offline_and_an_empty_cache_named(jobs_env, tmp_path):
    weights, checksum = served_clip(tmp_path)
    entry = json.dumps({"source": "clip", "id": f"hf-hub:{CLIP_REPO}", "pretrained": False})
    files = {
        f"{CLIP_REPO}/open_clip_config.json": json.dumps(CLIP_CONFIG).encode(),
        f"{CLIP_REPO}/open_clip_pytorch_model.bin": weights,
    }
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT / "src"), str(REPO_ROOT)])
    out = tmp_path / "fetched.json"
    with HubServer(files) as hub:
        online = env | cluster.ONLINE | {"HF_ENDPOINT": hub.endpoint, "NO_PROXY": "127.0.0.1"}
        proc = run_clip(online, "fetch", entry, str(jobs_env), str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"checksum {checksum}" in proc.stdout
    got = {p for _, p in hub.requests if p.endswith((".bin", ".json"))}
    assert f"/{CLIP_REPO}/resolve/main/open_clip_pytorch_model.bin" in got
    assert json.loads(out.read_text())["id"] == f"hf-hub:{CLIP_REPO}"
    snapshots = list((jobs_env / "huggingface" / "hub").rglob("open_clip_pytorch_model.bin"))
    assert [p.read_bytes() for p in snapshots] == [weights]

    # offline (the jobs' HF_HUB_OFFLINE=1, every internet connection refused): from the cache
    log = no_network_site(tmp_path / "no-network")
    offline = env | {"HF_ENDPOINT": "http://127.0.0.1:9"}
    offline["PYTHONPATH"] = os.pathsep.join([str(log.parent), offline["PYTHONPATH"]])
    proc = run_clip(offline, "load", entry)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"checksum {checksum}" in proc.stdout
    assert " connect " not in log.read_text()

    # an empty cache: an error naming the model, not a CLIP with random weights
    for path in snapshots:
        path.unlink()
    proc = run_clip(offline, "load", entry)
    assert proc.returncode != 0
    assert "WeightsUnavailableError: model 'tiny_clip'" in proc.stderr, proc.stderr[-3000:]
    assert f"repository {CLIP_REPO!r}" in proc.stderr


def test_a_hub_id_of_open_clip_passes_the_checks_before_any_job():
    """``hf-hub:org/repo`` is an open_clip model id: the up-front check does not refuse it for
    not being one of open_clip's built-in names."""
    from vcrbench.models.clip_models import check_clip

    spec = ModelSpec.from_config("tiny_clip", {"source": "clip", "id": f"hf-hub:{CLIP_REPO}"})
    assert check_clip(spec) == ([], None)


def test_a_missing_torchvision_weights_file_offline_is_named(jobs_env):
    entry = {"source": "torchvision", "id": "squeezenet1_1", "weights": "IMAGENET1K_V1"}
    with urllib_offline(), pytest.raises(WeightsUnavailableError) as err:
        load_model(ModelSpec.from_config("squeezenet", entry), "cpu")
    assert "'squeezenet'" in str(err.value)
    assert str(jobs_env / "torch" / "hub") in str(err.value)  # where to put the file
