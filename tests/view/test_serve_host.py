"""`cejudge view --serve` answers only requests for 127.0.0.1 or localhost (issue #41: DNS rebinding).

A page on evil.example can point its own name at 127.0.0.1 and read a local server from the user's
browser; the browser still sends `Host: evil.example`, so the server answers 403 to any other name. The
server runs in a thread on a free port; requests are raw HTTP so the Host header is exactly the test's.
"""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from cejudge_dspy.cli import _view as view

PAGE = b"<html>the page</html>"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[int]:
    page = tmp_path / "view.html"
    page.write_bytes(PAGE)
    bound = view.bind(page, 0)
    thread = threading.Thread(target=bound.serve_forever, daemon=True)
    thread.start()
    try:
        yield bound.server_address[1]
    finally:
        bound.shutdown()  # returns once serve_forever has stopped
        bound.server_close()
        thread.join()


def get(port: int, host: str | None, path: str = "/view.html") -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest("GET", path, skip_host=True)
        if host is not None:
            conn.putheader("Host", host)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.parametrize(
    "host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}", "127.0.0.1", "localhost"]
)
def test_our_own_names_get_the_page(server: int, host: str) -> None:
    assert get(server, host.format(port=server)) == (200, PAGE)


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:{port}", "127.0.0.1.evil.example:{port}", "localhost:1", "", None]
)
def test_any_other_host_is_forbidden(server: int, host: str | None) -> None:
    status, body = get(server, None if host is None else host.format(port=server))
    assert status == 403 and PAGE not in body


def test_other_paths_are_still_not_found(server: int) -> None:
    assert get(server, f"127.0.0.1:{server}", "/run.json")[0] == 404
