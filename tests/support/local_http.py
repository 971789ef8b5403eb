"""An HTTP server on 127.0.0.1 in a thread of the test, for the stand-ins of the hosts that
weights come from (tests/support/hub_server.py, tests/support/file_server.py)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LocalServer:
    """Serves with ``handler`` on a free port of 127.0.0.1 while in a ``with`` block;
    :attr:`address` is ``127.0.0.1:<port>``, :attr:`url` its ``http://`` address."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]):
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self._server.server_address[1]
        self.address = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.address}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
