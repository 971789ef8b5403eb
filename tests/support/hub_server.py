"""A stand-in Hugging Face Hub for the tests that download weights: an HTTP server on 127.0.0.1
(a thread of the test) that answers what ``huggingface_hub.hf_hub_download`` asks of the Hub.

``hf_hub_download`` (huggingface_hub 1.x and later) sends ``HEAD
{HF_ENDPOINT}/{repo}/resolve/{revision}/{filename}`` and reads the commit (``X-Repo-Commit``), the
file's ``ETag`` and its size (``Content-Length``) from the answer, then ``GET``s the same address
for the bytes and caches them under ``$HF_HUB_CACHE``. A file the server does not hold is a 404
with ``X-Error-Code: EntryNotFound`` (the hub's answer, which timm's fallbacks catch). Every
request is recorded (:attr:`HubServer.requests`).

For the processes that must then run without any network, :func:`no_network_site`: a
``sitecustomize`` that makes every internet socket's connect fail and records each attempt.
"""

from __future__ import annotations

import hashlib
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from tests.support.local_http import LocalServer

#: The commit every served repository is at (any 40 hex digits).
COMMIT = "0123456789abcdef0123456789abcdef01234567"


class HubServer(LocalServer):
    """Serves ``files`` (``{"<repo>/<filename>": bytes}``) at any revision, as the hub does,
    while in a ``with`` block; :attr:`endpoint` is the value of ``HF_ENDPOINT``."""

    def __init__(self, files: dict[str, bytes]):
        self.files = dict(files)
        self.requests: list[tuple[str, str]] = []  # (method, path)
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_HEAD(self):
                self._answer(body=False)

            def do_GET(self):
                self._answer(body=True)

            def _answer(self, body: bool):
                hub.requests.append((self.command, self.path))
                repo, sep, rest = self.path.lstrip("/").partition("/resolve/")
                _, _, filename = rest.partition("/")
                data = hub.files.get(f"{repo}/{filename.split('?')[0]}") if sep else None
                if data is None:
                    self.send_response(404)
                    self.send_header("X-Error-Code", "EntryNotFound")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Content-Type", "application/octet-stream")
                self.end_headers()
                if body:
                    self.wfile.write(data)

            def log_message(self, *args):  # quiet: the requests are recorded instead
                pass

        super().__init__(Handler)
        self.endpoint = self.url


_NO_NETWORK = """\
import errno, os, socket

_log = {log!r}
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


def _internet(sock, address):
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return False
    with open(_log, "a") as f:
        f.write(f"{{os.getpid()}} connect {{address!r}}\\n")
    return True


def _connect_blocked(sock, address):
    if _internet(sock, address):
        raise OSError(errno.ENETUNREACH, "network blocked by the test (sitecustomize)")
    return _connect(sock, address)


def _connect_ex_blocked(sock, address):
    return errno.ENETUNREACH if _internet(sock, address) else _connect_ex(sock, address)


socket.socket.connect = _connect_blocked
socket.socket.connect_ex = _connect_ex_blocked
with open(_log, "a") as f:
    f.write(f"{{os.getpid()}} started\\n")
"""


def no_network_site(folder: Path) -> Path:
    """Write into ``folder`` a ``sitecustomize.py`` that, in every Python process with ``folder``
    first on ``PYTHONPATH``, makes connecting an internet (IPv4/IPv6) socket raise ``OSError``
    (local sockets still work). Each process that loads it writes ``<pid> started`` to the
    returned log, and each attempt to connect ``<pid> connect <address>``."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "network.log"
    log.touch()
    (folder / "sitecustomize.py").write_text(_NO_NETWORK.format(log=str(log)))
    return log
