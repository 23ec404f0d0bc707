"""Local GGUF models behind llama.cpp's own server: one road to every model.

`--lm embedded` and `--lm gguf:PATH` start llama.cpp's C++ server (`llama-server`, as the prebuilt xllamacpp
wheel ships it) on 127.0.0.1, once per process and configuration, and the judges reach it exactly as they
reach a server a user runs: the same `dspy.LM` builder, adapter, scorer (`_http_scoring.ServerScorer`),
features probe and records. What the package adds is the process: started on first use (`_server_child.py`,
a child in its own session, so a Ctrl-C in the terminal reaches the judge, which then stops the server),
kept for the process's lifetime (a Ray worker is its own process and starts its own), stopped at exit.

How it is configured for judging (docs/measurements/local-server.md says what each setting measured):
* `slots` parallel sequences with continuous batching, and a unified KV cache (`kv_unified`): the slots share
  one pool of `n_ctx * slots` cells, so one long call may use more than its share;
* a prompt cache in host memory (`cache_ram_mib`): a finished call's prompt state is kept and restored for
  the next call that shares its prefix (an item's stage calls share the signature's instructions, items that
  share an instruction share more), so shared text is computed once;
* with one slot, each stage's prefix saved to disk and restored by the next process (`states`,
  `_prompt_states.py`), so a new process does not compute the instructions again;
* threads = the machine's cores; the chat template from the GGUF (jinja).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx

from cejudge_dspy.backbones._options import DEFAULT_REPEAT_PENALTY
from cejudge_dspy.errors import BackboneError

# The server's defaults for judging (measured: docs/measurements/local-server.md).
# Calls decoded together. One: a call lands on the slot that holds the previous call's prompt, so an item's
# stage calls share their prefix (measured on 2 cores: CE-Judge 1.75x and the direct judge 1.17x faster than
# 4 slots at --concurrency 1, with half the prompt tokens evaluated); `--parallel N` for more.
DEFAULT_SLOTS = 1
DEFAULT_N_CTX = 8192  # tokens of context per slot (the longest judge prompts measured about 4k)
DEFAULT_CACHE_RAM_MIB = 2048  # prompt states kept in host memory (~28 KB per token of the 1.5B model)
READY_DEADLINE_S = 300.0  # loading a model on a busy 2-core machine; the wait ends as soon as it answers
STOP_GRACE_S = 10.0


@dataclass(frozen=True)
class ServerConfig:
    """One local server: the model file and how it serves. Equal configs share one server per process."""

    model: str
    alias: str  # the model name the server answers to (`llama-server/<alias>`)
    slots: int = DEFAULT_SLOTS
    n_ctx: int = DEFAULT_N_CTX  # per slot
    threads: int = 0  # 0: the machine's cores
    cache_ram_mib: int = DEFAULT_CACHE_RAM_MIB
    kv_unified: bool = True
    n_cache_reuse: int = 0
    repeat_penalty: float = DEFAULT_REPEAT_PENALTY
    port: int = 0  # 0: a free port the OS picks (a fixed one only where an address must survive a restart)
    metrics: bool = False  # llama.cpp's /metrics counters (benchmarks read the tokens it evaluated)
    # Threads that wait sleep instead of spinning (llama.cpp's `poll` 0, OpenMP's passive wait): a spinning
    # thread takes a core from whatever else runs, and on a shared machine its decode steps then stall
    # behind descheduled threads (measured: docs/measurements/local-server.md).
    spin: bool = False
    # Where the server saves and restores slot states (`_prompt_states.py`: stage prefixes kept across
    # processes); None: nowhere.
    states: str | None = None

    def child_config(self) -> dict[str, object]:
        config = asdict(self)
        config["threads"] = self.threads or (os.cpu_count() or 1)
        config["n_ctx"] = self.n_ctx * self.slots  # the unified pool holds every slot's share
        return config


def xllamacpp_missing() -> str | None:
    """Why llama.cpp's server cannot run here (None when it can)."""
    if importlib.util.find_spec("xllamacpp") is None:
        return (
            "llama.cpp's server (the xllamacpp package) is not installed, so local GGUF models cannot run; "
            "pip install 'cejudge-dspy[embedded]', or use your own server with --lm llama-server/NAME "
            "--api-base http://HOST:PORT/v1"
        )
    return None


class LocalServer:
    """One llama.cpp server process for `config`; `start()` returns its api_base (…/v1)."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.process: subprocess.Popen[str] | None = None
        self.address: str | None = None
        self.log = tempfile.TemporaryFile(mode="w+", prefix="cejudge-llama-server-")

    @property
    def api_base(self) -> str:
        if self.address is None:
            raise BackboneError("the local llama.cpp server is not running")
        return f"http://{self.address}/v1"

    @property
    def pid(self) -> int:
        """The server process's id (its progress bounds the calls to it: `_progress.py`)."""
        if self.process is None:
            raise BackboneError("the local llama.cpp server is not running")
        return self.process.pid

    def start(self, deadline_s: float = READY_DEADLINE_S) -> str:
        child = Path(__file__).with_name("_server_child.py")
        env = dict(os.environ)
        if not self.config.spin:  # a user's own OMP_WAIT_POLICY stands
            env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        self.process = subprocess.Popen(
            [sys.executable, str(child), json.dumps(self.config.child_config())],
            env=env,
            stdout=subprocess.PIPE,
            stderr=self.log,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,  # the terminal's Ctrl-C is the judge's; it stops the server itself
        )
        line = self._first_line(deadline_s)
        try:
            reply = json.loads(line)
        except ValueError:
            reply = {}
        if "address" not in reply:
            self.stop()
            why = reply.get("error") or f"it exited with {self.process.returncode if self.process else '?'}"
            raise BackboneError(
                f"llama.cpp's server did not start for {self.config.model}: {why}{self._tail()}"
            )
        self.address = self._loopback(str(reply["address"]))
        self._wait_healthy(deadline_s)
        return self.api_base

    def _first_line(self, deadline_s: float) -> str:
        """The child's one line (its address or its error), read on a thread so a hung load is bounded."""
        assert self.process is not None and self.process.stdout is not None
        out: list[str] = []
        reader = threading.Thread(target=lambda: out.append(self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(deadline_s)
        if reader.is_alive():
            self.stop()
            raise BackboneError(
                f"llama.cpp's server did not load {self.config.model} within {deadline_s:.0f} s"
            )
        return out[0] if out else ""

    @staticmethod
    def _loopback(address: str) -> str:
        host, _, port = address.rpartition(":")
        if not port.isdigit():
            raise BackboneError(f"llama.cpp's server reported an address without a port: {address!r}")
        return f"127.0.0.1:{port}"  # bound to 127.0.0.1 only (`_server_child`)

    def _wait_healthy(self, deadline_s: float) -> None:
        """`/health` answers 200 once the model is loaded and the slots are ready."""
        end = time.monotonic() + deadline_s
        url = f"http://{self.address}/health"
        while time.monotonic() < end:
            if self.process is None or self.process.poll() is not None:
                raise BackboneError(
                    f"llama.cpp's server exited while loading {self.config.model}{self._tail()}"
                )
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url, timeout=5.0).status_code == 200:
                    return
            time.sleep(0.1)  # a poll interval while the model loads, not a wait for an event
        self.stop()
        raise BackboneError(f"llama.cpp's server did not become ready within {deadline_s:.0f} s")

    def _tail(self, chars: int = 600) -> str:
        with contextlib.suppress(OSError, ValueError):
            self.log.seek(0)
            text = " ".join(self.log.read()[-chars:].split())
            return f" (its log ends: {text})" if text else ""
        return ""

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """Terminate the server, kill it if it lingers; safe to call twice."""
        process, self.process, self.address = self.process, None, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=STOP_GRACE_S)
        if process.stdout is not None:
            process.stdout.close()


_servers: dict[ServerConfig, LocalServer] = {}
_lock = threading.Lock()


def local_server(config: ServerConfig, on_status: object = None) -> LocalServer:
    """The running server for `config` in this process, started on first use and kept until exit.

    A server that died (killed, out of memory) is started again on the next request for it."""
    if why := xllamacpp_missing():
        raise BackboneError(why)
    with _lock:
        server = _servers.get(config)
        if server is not None and server.alive():
            return server
        if callable(on_status):
            on_status(f"starting llama.cpp's server for {Path(config.model).name} ({config.slots} slots)")
        server = LocalServer(config)
        server.start()
        _servers[config] = server
        return server


def running_servers() -> list[LocalServer]:
    with _lock:
        return [s for s in _servers.values() if s.alive()]


@atexit.register
def stop_all() -> None:
    """Stop every server this process started (at exit, and for tests)."""
    with _lock:
        servers = list(_servers.values())
        _servers.clear()
    for server in servers:
        server.stop()
