"""A ``checkpoint`` entry's ``url`` downloaded by ``fetch_weights`` (vcrbench.models.download), with
stand-ins for its hosts on 127.0.0.1 (tests/support/file_server.py): a plain file URL, a Google
Drive link through gdown and Drive's confirm page, a download cut halfway and completed by the
rerun, a wrong sha256, and a rerun that reuses the file without asking any server."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time

import pytest

from tests.support.file_server import CONFIRM, FileServer, drive_through
from vcrbench.errors import WeightsUnavailableError
from vcrbench.models import download, fetch

DATA = bytes(range(256)) * 16384  # 4 MiB, not all alike: four of the download's 1 MiB chunks
SHA = hashlib.sha256(DATA).hexdigest()
DRIVE_ID = "1wFsiB5h4Fgv6HqOkI_1jR1SZOB_eNK9r"  # the form of a Drive id (NoisyMix's in paper.yaml)


@pytest.fixture
def server(monkeypatch):
    """A stand-in serving DATA at /release/w.pth and as Drive file DRIVE_ID, gdown's https
    requests sent to it."""
    with FileServer({"/release/w.pth": DATA}, {DRIVE_ID: ("w.pth", DATA)}) as srv:
        drive_through(monkeypatch, srv)
        yield srv


def urls(server) -> dict[str, str]:
    return {
        "plain": f"{server.url}/release/w.pth",
        "drive": f"https://drive.google.com/uc?id={DRIVE_ID}",
    }


def test_a_plain_url_is_streamed_into_the_checkpoint_with_a_progress_bar(server, tmp_path, capsys):
    path = tmp_path / "models" / "w.pth"
    got = download.download_checkpoint("m", f"{server.url}/release/w.pth", path, SHA)
    assert got == f"sha256:{SHA}" and path.read_bytes() == DATA
    assert [p.name for p in path.parent.iterdir()] == ["w.pth"]  # no temporary left
    assert server.requests == [("GET", server.address, "/release/w.pth")]
    assert "w.pth" in capsys.readouterr().err  # tqdm's bar, on standard error (the job's log)


@pytest.mark.parametrize(
    "link",
    [
        f"https://drive.google.com/uc?id={DRIVE_ID}",
        f"https://drive.google.com/file/d/{DRIVE_ID}/view?usp=sharing",
    ],
)
def test_a_drive_link_goes_through_gdown_and_its_confirm_page(server, tmp_path, link):
    path = tmp_path / "w.pth"
    assert download.download_checkpoint("m", link, path) == f"sha256:{SHA}"
    assert path.read_bytes() == DATA and [p.name for p in tmp_path.iterdir()] == ["w.pth"]
    (_, host1, asked1), (_, host2, asked2) = server.requests
    assert (host1, asked1) == ("drive.google.com", f"/uc?id={DRIVE_ID}")  # the id, parsed
    assert host2 == "drive.usercontent.google.com"  # the confirm page's form, followed
    assert asked2.startswith("/download?") and all(f"{k}={v}" in asked2 for k, v in CONFIRM.items())


@pytest.mark.parametrize("host", ["plain", "drive"])
def test_a_download_cut_halfway_leaves_no_file_and_the_rerun_completes_it(server, tmp_path, host):
    url, path = urls(server)[host], tmp_path / "w.pth"
    server.cut = {"/release/w.pth", DRIVE_ID}
    with pytest.raises(WeightsUnavailableError) as err:
        download.download_checkpoint("noisymix", url, path, SHA)
    message = str(err.value)
    assert "model 'noisymix'" in message and url in message and str(path) in message
    assert list(tmp_path.iterdir()) == []  # neither the file nor a part of it
    asked = len(server.requests)
    assert download.download_checkpoint("noisymix", url, path, SHA) == f"sha256:{SHA}"
    assert path.read_bytes() == DATA and len(server.requests) > asked


def test_a_download_killed_halfway_is_completed_by_the_rerun(server, tmp_path):
    """A process killed (SIGKILL) in the middle of a download leaves its temporary beside the
    checkpoint, never the checkpoint; the rerun removes the dead process's temporary and
    downloads the file whole."""
    url, path = urls(server)["plain"], tmp_path / "w.pth"
    server.stall = {"/release/w.pth"}
    code = "import sys; from vcrbench.models import download; download.download_checkpoint("
    code += "'m', sys.argv[1], sys.argv[2], progress=False)"
    proc = subprocess.Popen([sys.executable, "-c", code, url, str(path)])
    try:
        deadline = time.monotonic() + 30
        while not any(p.stat().st_size >= download.CHUNK for p in tmp_path.iterdir()):
            assert proc.poll() is None and time.monotonic() < deadline, "no half download"
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    (left,) = tmp_path.iterdir()
    assert left.name.startswith(".w.pth.") and left.name.endswith(".tmp") and not path.exists()
    assert download.download_checkpoint("m", url, path, SHA) == f"sha256:{SHA}"
    assert path.read_bytes() == DATA and [p.name for p in tmp_path.iterdir()] == ["w.pth"]


@pytest.mark.parametrize("host", ["plain", "drive"])
def test_a_wrong_sha256_names_the_model_the_url_and_both_hashes_and_leaves_no_file(
    server, tmp_path, host
):
    url, path, wrong = urls(server)[host], tmp_path / "w.pth", "ab" * 32
    with pytest.raises(WeightsUnavailableError) as err:
        download.download_checkpoint("sin", url, path, wrong)
    message = str(err.value)
    assert "model 'sin'" in message and url in message and SHA in message and wrong in message
    assert list(tmp_path.iterdir()) == []


def tiny_weights(folder) -> bytes:
    """A state dict of timm's smallest ResNet (0.5 M parameters), as a .pth file's bytes."""
    import timm
    import torch

    torch.manual_seed(0)
    path = folder / "served.pth"
    torch.save(timm.create_model("test_resnet.r160_in1k", pretrained=False).state_dict(), path)
    return path.read_bytes()


def test_fetch_weights_downloads_checks_records_then_reuses_the_file_offline(tmp_path):
    """The library call of the rule fetch_weights: the download, the model built from it, the
    sha256 in the record; the rerun (the record made again) reads the file there and asks no
    server: the stand-in is stopped, and a request would fail."""
    weights = tiny_weights(tmp_path)
    sha = hashlib.sha256(weights).hexdigest()
    checkpoint = tmp_path / "models" / "tiny.pth"
    with FileServer({"/tiny.pth": weights}) as srv:
        entry = {
            "source": "checkpoint",
            "library": "timm",
            "id": "test_resnet.r160_in1k",
            "checkpoint": str(checkpoint),
            "url": f"{srv.url}/tiny.pth",
            "sha256": sha,
        }
        out = tmp_path / "results" / "weights" / "tiny.json"
        record = fetch.fetch_weights("tiny", entry, tmp_path / "cache", out)
    assert srv.requests == [("GET", srv.address, "/tiny.pth")]
    assert checkpoint.read_bytes() == weights
    assert record["sha256"] == f"sha256:{sha}" and json.loads(out.read_text()) == record
    first = out.read_bytes()
    out.unlink()
    assert fetch.fetch_weights("tiny", entry, tmp_path / "cache", out) == record
    assert out.read_bytes() == first and len(srv.requests) == 1  # nothing asked of any server


def test_a_file_there_with_another_sha256_is_named_and_kept(tmp_path):
    checkpoint = tmp_path / "w.pth"
    checkpoint.write_bytes(DATA)
    entry = {
        "source": "checkpoint",
        "library": "timm",
        "id": "test_resnet.r160_in1k",
        "checkpoint": str(checkpoint),
        "url": "http://127.0.0.1:9/w.pth",  # the discard port: a request would fail
        "sha256": "cd" * 32,
    }
    with pytest.raises(WeightsUnavailableError, match=rf"model 'w'.*{SHA}.*{'cd' * 32}"):
        fetch.fetch_weights("w", entry, tmp_path / "cache", tmp_path / "w.json")
    assert checkpoint.read_bytes() == DATA and not (tmp_path / "w.json").exists()
