"""A gated, OpenAI-compatible chat-completions server on 127.0.0.1, for tests that must stop a run mid-way.

`GatedServer` answers every POST to .../chat/completions with a well-formed CE-Judge stage answer,
computed as the simulated backbone computes it (`fields_of`, `stage_of`, `answer`, `render`), so a run
against `--lm openai/gated --api-base <api_base>` judges every item. The gate is a `threading.Event`,
open at start: `close()` makes every later request wait until `open()` (or `stop()`), and `hold_when`
closes it from inside the server, checked before each answer, so no request is answered once the
condition holds (e.g. "results.jsonl has 4 records"): the test decides when the run stops making
progress, not the clock. `held` counts the requests waiting at the gate; `bodies` keeps each chat request's
JSON body, so a test can read the prompts a run sent.

It binds 127.0.0.1 only (port 0: a free one), serves from a daemon thread, and answers a held request
whose client went away without complaint. `stop()` opens the gate (held requests end unanswered) and
shuts the server down. Self-contained: it depends only on the standard library and the simulated
backbone's answer functions.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable
from typing import Any

from cejudge_dspy.backbones._simulated_answers import answer, fields_of, render, stage_of

MODEL = "openai/gated"  # the `--lm` of a run against this server (litellm's OpenAI-compatible client)


def _text(content: Any) -> str:
    """A chat message's text: a string, or a list of content parts."""
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def completion(body: dict[str, Any]) -> dict[str, Any]:
    """The chat-completion response to `body`, answered as `SimulatedEngine.prepare` answers."""
    messages = body.get("messages") or []
    system = "".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    last = _text(messages[-1].get("content")) if messages else ""
    text = render(answer(stage_of(system), fields_of(last)), "Respond with a JSON object" in last)
    prompt = system + "".join(_text(m.get("content")) for m in messages if m.get("role") != "system")
    p, o = max(1, round(len(prompt) / 4)), max(1, round(len(text) / 4))
    return {
        "id": "gated",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "gated"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": p, "completion_tokens": o, "total_tokens": p + o},
    }


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _HTTPServer

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        gated = self.server.gated
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}", "code": 404}})
            return
        with gated.lock:
            gated.bodies.append(body)
        if not gated.admit():
            self.close_connection = True  # stopped while held: end it unanswered
            return
        self._send(200, completion(body))
        with gated.lock:
            gated.answered += 1

    def _send(self, status: int, out: dict[str, Any]) -> None:
        data = json.dumps(out).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client went away while its request was held (a killed worker)
            self.close_connection = True


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    gated: GatedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that disconnected mid-request is expected here, not a failure to print


class GatedServer:
    """The server, its gate and its counters; a context manager (`with GatedServer() as server:`)."""

    def __init__(self, port: int = 0) -> None:
        self.gate = threading.Event()
        self.gate.set()
        self.lock = threading.Lock()
        self.hold_when: Callable[[], bool] | None = None
        self.held = 0  # requests waiting at the closed gate now
        self.answered = 0
        self.bodies: list[dict[str, Any]] = []  # every chat request's body, in arrival order
        self.stopped = False
        # A given port lets a test bring "the same server" back after stopping it (same api_base, so the
        # same run identity); 0 picks a free one.
        self._http = _HTTPServer(("127.0.0.1", port), _Handler)
        self._http.gated = self
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True, name="gated-server")

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> GatedServer:
        self._thread.start()
        return self

    def close(self) -> None:
        """From now on every request waits at the gate."""
        with self.lock:
            self.gate.clear()

    def open(self) -> None:
        """Answer the held requests and every later one (and forget `hold_when`)."""
        with self.lock:
            self.hold_when = None
            self.gate.set()

    def admit(self) -> bool:
        """Wait while the gate is closed, closing it first when `hold_when` holds; False once stopped."""
        with self.lock:
            if self.hold_when is not None and self.hold_when():
                self.gate.clear()
            if self.gate.is_set():
                return not self.stopped
            self.held += 1
        try:
            self.gate.wait()
        finally:
            with self.lock:
                self.held -= 1
        return not self.stopped

    def stop(self) -> None:
        """Release the held requests unanswered and shut the server down."""
        with self.lock:
            self.stopped = True
            self.hold_when = None
            self.gate.set()
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> GatedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
