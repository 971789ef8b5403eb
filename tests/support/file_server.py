"""Stand-ins for the hosts that ``checkpoint`` weights come from, on 127.0.0.1 (a thread of the
test): a plain file server (a GitHub release, a lab's server) and Google Drive.

Drive, as gdown meets it: ``GET /uc?id=<id>`` of a large file answers an HTML page (no
``Content-Disposition``) whose one-line ``<form id="download-form">`` posts to
``https://drive.usercontent.google.com/download`` with hidden ``id``, ``export``, ``confirm`` and
``uuid`` fields; gdown parses it (``gdown.download.get_url_from_gdrive_confirmation``) and GETs that
address with those fields, which answers the bytes with ``Content-Disposition: attachment``.
:func:`drive_through` sends the https requests of gdown's session to the stand-in.

Every request is recorded (:attr:`FileServer.requests`: method, host asked for, path and query).
A file listed in :attr:`FileServer.cut` is cut the first time it is sent: the full
``Content-Length``, half the bytes, then the connection closed; one in :attr:`FileServer.stall`
the same, but the connection is held open (a download that a kill then ends) until the server
stops.
"""

from __future__ import annotations

import importlib
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler

from tests.support.local_http import LocalServer

#: The hidden fields of the stand-in's confirm page, as Drive's page has them.
CONFIRM = {"export": "download", "confirm": "t", "uuid": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"}


def confirm_page(file_id: str) -> bytes:
    """Drive's "Google Drive can't scan this file for viruses" page, its form on one line."""
    fields = "".join(
        f'<input type="hidden" name="{k}" value="{v}">'
        for k, v in {"id": file_id, **CONFIRM}.items()
    )
    form = (
        '<form id="download-form" action="https://drive.usercontent.google.com/download" '
        f'method="get"><input type="submit" value="Download anyway">{fields}</form>'
    )
    return (
        "<!DOCTYPE html><html><head><title>Google Drive - Virus scan warning</title></head>\n"
        f"<body><p>Google Drive can't scan this file for viruses.</p>{form}</body></html>\n"
    ).encode()


class FileServer(LocalServer):
    """Serves ``files`` (``{"/path": bytes}``) as a plain server, and ``drive`` (``{file id:
    (file name, bytes)}``) as Google Drive does, while in a ``with`` block."""

    def __init__(self, files: dict[str, bytes] | None = None, drive: dict | None = None):
        self.files = dict(files or {})
        self.drive = dict(drive or {})
        self.cut: set[str] = set()  # paths or Drive ids sent cut short the first time
        self.stall: set[str] = set()  # ... sent half, then held until the server stops
        self.stopping = threading.Event()
        self.requests: list[tuple[str, str, str]] = []  # (method, host asked for, path?query)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                host = self.headers.get("X-Stand-In-For", self.headers.get("Host", ""))
                server.requests.append(("GET", host, self.path))
                query = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
                if url.path == "/uc" and query.get("id") in server.drive:
                    page = confirm_page(query["id"])
                    return self._send(page, "text/html; charset=utf-8", None, None)
                if url.path == "/download" and query.get("id") in server.drive:
                    if {k: query.get(k) for k in CONFIRM} != CONFIRM:
                        return self._send(b"not confirmed", "text/plain", None, None, 403)
                    name, data = server.drive[query["id"]]
                    return self._send(data, "application/octet-stream", name, query["id"])
                if url.path in server.files:
                    return self._send(
                        server.files[url.path], "application/octet-stream", None, url.path
                    )
                self._send(b"not found", "text/plain", None, None, 404)

            def _send(self, data, kind, name, key, status=200):
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                if name is not None:
                    self.send_header("Content-Disposition", f'attachment; filename="{name}"')
                if key in server.cut | server.stall:
                    stall = key in server.stall
                    server.cut.discard(key)
                    server.stall.discard(key)
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    if stall:
                        server.stopping.wait(60)
                    self.close_connection = True
                    return
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):  # quiet: the requests are recorded instead
                pass

        super().__init__(Handler)

    def __exit__(self, *exc) -> None:
        self.stopping.set()  # a stalled answer ends
        super().__exit__(*exc)


def drive_through(monkeypatch, server: FileServer) -> None:
    """Send the https requests of gdown's session (``gdown.download._get_session``, where gdown
    makes the one session of a download) to ``server``, with the host asked for in a header:
    gdown's own handling of Drive's URLs (the id parsed from the link, ``/uc?id=``, the confirm
    page, the address it names) runs as it would against Drive."""
    import requests

    gdown_download = importlib.import_module("gdown.download")
    make_session = gdown_download._get_session

    class ToStandIn(requests.adapters.HTTPAdapter):
        def send(self, request, **kwargs):
            url = urllib.parse.urlsplit(request.url)
            request.headers["X-Stand-In-For"] = url.hostname
            request.url = urllib.parse.urlunsplit(
                url._replace(scheme="http", netloc=server.address)
            )
            return super().send(request, **{**kwargs, "proxies": {}})

    def session(**kwargs):
        sess, cookies_file = make_session(**kwargs)
        sess.mount("https://", ToStandIn())
        return sess, cookies_file

    monkeypatch.setattr(gdown_download, "_get_session", session)
