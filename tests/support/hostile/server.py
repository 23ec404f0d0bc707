"""A broken or hostile OpenAI-compatible chat server on 127.0.0.1, for the server cases of the hostile corpus
(issue #49): every way a server's answer can be wrong that a run must survive with one line or an honest
outcome recorded.

`HostileServer(mode)` answers every POST to .../chat/completions as the gated server does (a well-formed
stage answer, `gated_server.completion`), then spoils it as `mode` says:

* `nan`, `plus5`, `inf`: token log probabilities that no model gives (NaN, +5, +Infinity) on every token and
  its alternatives, written as Python's json writes them (bare `NaN`, `Infinity`), as a broken server does;
* `length`: the answer cut in half with `finish_reason: "length"` (the output budget ran out);
  `length-whole`: the whole well-formed answer, with `finish_reason: "length"` all the same (it parses, so
  only the reason tells that it may have been cut);
* `escapes`: a well-formed answer whose free text (every value with a space in it) carries a clear-screen,
  a window title, a hyperlink and a bell, as a model's answer can;
* `echo-key`: HTTP 400 whose message repeats the request's Authorization header (the key);
* `no-choices`: `{"choices": []}`; `not-json`: an HTML page with status 200; `no-message`: a choice without
  its `message`; `garbage`: an answer that is no answer (control characters and stray markers);
* `stall`: accepts the request and never answers until `stop()` (a hung server); `arrived` is set when the
  first such request is held, so a test waits on it, never on a clock.

`requests` counts the chat requests. It binds 127.0.0.1 only, on a free port, from a daemon thread.
"""

from __future__ import annotations

import http.server
import json
import math
import re
import threading
from typing import Any

from tests.support.gated_server import completion

MODEL = "openai/judge"
MODES = (
    "nan",
    "plus5",
    "inf",
    "length",
    "length-whole",
    "escapes",
    "echo-key",
    "no-choices",
    "not-json",
    "no-message",
    "garbage",
    "stall",
)
_BAD_LOGPROB = {"nan": math.nan, "plus5": 5.0, "inf": math.inf}
GARBAGE = "\x00\ufffd}{ ]] ## [[ lorem"  # the `garbage` answer
ESCAPES = "\x1b[2J\x1b]0;pwned\x07\x1b]8;;http://127.0.0.1/\x1b\\link\x1b]8;;\x1b\\\x07"  # the `escapes` text
_PIECES = re.compile(r"\s+|\w+|[^\w\s]")


def with_logprobs(out: dict[str, Any], value: float) -> dict[str, Any]:
    """`out` with per-token log probabilities of `value` (the answer split at words, spaces and marks), each
    with the token and `A`/`B` as alternatives, so the judges find their answer token and read it."""
    choice = out["choices"][0]
    pieces = _PIECES.findall(choice["message"]["content"])
    content = [
        {
            "token": piece,
            "logprob": value,
            "top_logprobs": [{"token": t, "logprob": value} for t in dict.fromkeys([piece, "A", "B"])],
        }
        for piece in pieces
    ]
    return out | {"choices": [choice | {"logprobs": {"content": content}}]}


def cut_short(out: dict[str, Any]) -> dict[str, Any]:
    """`out` with its answer cut in half where the token budget ran out."""
    choice = out["choices"][0]
    text = choice["message"]["content"]
    message = choice["message"] | {"content": text[: max(1, len(text) // 2)]}
    return out | {"choices": [choice | {"message": message, "finish_reason": "length"}]}


def with_escapes(out: dict[str, Any]) -> dict[str, Any]:
    """`out` with ESCAPES after the first word of every free-text value (one with a space in it) of its JSON
    or `[[ ## field ## ]]` answer; single words (a verdict, a grade, a number) are left to parse."""

    def spoil(value: Any) -> Any:
        if isinstance(value, str) and " " in value.strip():
            head, _, rest = value.partition(" ")
            return f"{head} {ESCAPES}{rest}"
        if isinstance(value, list):
            return [spoil(v) for v in value]
        return value

    choice = out["choices"][0]
    text = choice["message"]["content"]
    try:
        fields = json.loads(text)
    except ValueError:
        fields = None
    if isinstance(fields, dict):
        text = json.dumps({k: spoil(v) for k, v in fields.items()})
    else:  # the chat adapter's sections: spoil each line of text
        text = "\n".join(line if line.startswith("[[") else spoil(line) for line in text.split("\n"))
    return out | {"choices": [choice | {"message": choice["message"] | {"content": text}}]}


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _HTTPServer

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        hostile = self.server.hostile
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        with hostile.lock:
            hostile.requests += 1
        mode = hostile.mode
        if mode == "stall":
            hostile.arrived.set()
            hostile.released.wait()
            self.close_connection = True
            return
        if mode == "echo-key":
            said = self.headers.get("Authorization", "")
            self._send(400, {"error": {"message": f"invalid request from {said}", "type": "invalid"}})
            return
        if mode == "not-json":
            self._send_bytes(200, b"<html><body>502 Bad Gateway</body></html>", "text/html")
            return
        out = completion(body)
        if mode in _BAD_LOGPROB:
            out = with_logprobs(out, _BAD_LOGPROB[mode])
        elif mode == "length":
            out = cut_short(out)
        elif mode == "length-whole":
            out["choices"][0]["finish_reason"] = "length"
        elif mode == "escapes":
            out = with_escapes(out)
        elif mode == "no-choices":
            out["choices"] = []
        elif mode == "no-message":
            out["choices"] = [{"index": 0, "finish_reason": "stop"}]
        elif mode == "garbage":
            out["choices"][0]["message"]["content"] = GARBAGE
        self._send(200, out)

    def _send(self, status: int, out: dict[str, Any]) -> None:
        self._send_bytes(status, json.dumps(out).encode(), "application/json")  # NaN stays bare: allow_nan

    def _send_bytes(self, status: int, data: bytes, kind: str) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (its timeout)
            self.close_connection = True


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    hostile: HostileServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out and went away is what some cases are about


class HostileServer:
    """The server in one of MODES; a context manager (`with HostileServer("nan") as server:`)."""

    def __init__(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; one of {', '.join(MODES)}")
        self.mode = mode
        self.lock = threading.Lock()
        self.requests = 0
        self.arrived = threading.Event()  # a stalled request is being held
        self.released = threading.Event()  # set by stop(): held requests end unanswered
        self._http = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._http.hostile = self
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True, name="hostile-server")

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def start(self) -> HostileServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.released.set()
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> HostileServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
