"""Send the https requests that ``urllib.request.urlopen`` makes (torch.hub's downloads: GitHub's
zipballs and branch check, ``load_state_dict_from_url``) to a stand-in server on 127.0.0.1, with
the host asked for in an ``X-Stand-In-For`` header (tests/support/file_server.py records it), or
refuse them all as a machine without network does.

Both go through urllib's own extension point, :func:`urllib.request.install_opener` (a handler for
the ``https`` scheme), so torch.hub's URL handling runs as it would against the real hosts.
"""

from __future__ import annotations

import contextlib
import urllib.error
import urllib.parse
import urllib.request


class _ToStandIn(urllib.request.HTTPSHandler):
    def __init__(self, address: str):
        super().__init__()
        self.address = address

    def https_open(self, req):
        url = urllib.parse.urlsplit(req.full_url)
        local = urllib.parse.urlunsplit(url._replace(scheme="http", netloc=self.address))
        forwarded = urllib.request.Request(
            local, data=req.data, headers=dict(req.header_items()), method=req.get_method()
        )
        forwarded.add_header("X-Stand-In-For", url.hostname)
        forwarded.timeout = req.timeout  # what the opener set on the request it was given
        return urllib.request.HTTPHandler().http_open(forwarded)


class _Offline(urllib.request.BaseHandler):
    handler_order = 100  # before urllib's own http and https handlers

    def _refuse(self, req):
        raise urllib.error.URLError(f"no network here: {req.full_url}")

    http_open = https_open = _refuse


@contextlib.contextmanager
def urllib_through(address: str):
    """While in the block, ``urlopen`` sends every https request to ``address``
    (``127.0.0.1:<port>``); plain http goes where it says."""
    urllib.request.install_opener(urllib.request.build_opener(_ToStandIn(address)))
    try:
        yield
    finally:
        urllib.request.install_opener(None)


@contextlib.contextmanager
def urllib_offline():
    """While in the block, every ``urlopen`` fails with :class:`urllib.error.URLError`."""
    urllib.request.install_opener(urllib.request.build_opener(_Offline()))
    try:
        yield
    finally:
        urllib.request.install_opener(None)
