"""Token log probabilities of a *given* answer through an OpenAI-compatible server: the HTTP road's scorer.

The in-process engines score an answer with one forward pass (`llamacpp/_answer_scorer.py`). Over HTTP
the server has to do it, and the OpenAI API has no "score this text" call. What works against
llama.cpp's Python server (`python -m llama_cpp.server`), measured here:

* a chat completion whose output a GBNF `grammar` forces to be exactly the answer, with `logprobs`: the
  server applies its own chat template to the messages (so the prompt is the one the in-process scorer
  renders), and llama-cpp-python reports each generated token's log probability from the raw logits,
  before the grammar filtered them. So the forced tokens' log probabilities are the model's own, as if it
  had written the answer: for "8 + 7" -> "16" the server gave -6.11 and -7.67 where the in-process scorer
  gave -6.10 and -7.70. Cost: the prompt once plus one decode step per answer token.
* not `/v1/completions` with `echo` and `logprobs`: llama-cpp-python 0.3.36 reads each prompt token's
  log probability from the row that *follows* it when the model has no BOS token (Qwen), so the figures
  are shifted by one and meaningless; and it sorts the whole vocabulary per prompt token (seconds each).

Differences from in-process: the text that closes the assistant's turn is not scored (the server stops at
it without reporting it), so means are over the answer's own tokens; and the grammar lets the model pick
the tokenisation it finds likeliest where several spell the same text.

A server that ignores `grammar` (a hosted API, Ollama) answers something else, and one that reports
probabilities after the grammar gives about 0 for every forced token: `probe` asks once for an unlikely
text and says which it is, so such a backbone is treated as one that cannot score a given text. Before
that it looks for llama.cpp's tokenizer route (`/extras/tokenize`, `/tokenize`): a server without one is
not sent a generation it would only answer wrongly. Only a backbone built with an `api_base` is probed,
and only when a judge first needs a text scored (`backbones.can_score` never asks).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import httpx

# Forced once by the probe: no model writes it on its own, so getting it back verbatim means the server
# honoured the grammar, and its minimum log probability far below 0 means the figures are the model's own.
PROBE_MESSAGES = [{"role": "user", "content": "What is the capital of France? Answer with one word."}]
PROBE_ANSWER = "Zebra qua 7 Paris"
PROBE_FLOOR = -2.0
TIMEOUT_S = 300.0  # one answer's prompt plus a decode step per token, on a busy CPU server


class Unreachable(ValueError):
    """The server did not answer at all (refused, timed out): says nothing about what it can do."""


def text_scorer(lm: Any) -> Any:
    """How `lm` scores a given answer (`(messages, answer) -> log probabilities`), or None where it cannot:
    a local engine's `answer_logprobs`, else a server's `ServerScorer` once its probe passed."""
    score = getattr(getattr(lm, "engine", None), "answer_logprobs", None)
    if callable(score):
        return score
    server = getattr(lm, "server_scorer", None)
    if isinstance(server, ServerScorer) and server.probe() is None:
        return server
    return None


def can_score(lm: Any) -> bool | None:
    """Whether `lm` scores a given text, without asking a server: None for a server not yet probed (the
    judges probe it the first time they need a text scored)."""
    if callable(getattr(getattr(lm, "engine", None), "answer_logprobs", None)):
        return True
    server = getattr(lm, "server_scorer", None)
    if not isinstance(server, ServerScorer):
        return False
    return server.known()


def gbnf_literal(text: str) -> str:
    """A GBNF grammar whose only sentence is `text` (quotes, backslashes and control characters escaped)."""
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return 'root ::= "' + "".join(out) + '"'


@dataclass
class ServerScorer:
    """Scores answers through the chat-completions endpoint at `api_base` (see the module docstring).

    Callable as a `judges._likelihood.Scorer`: `(messages, answer) -> log probabilities`; raises
    ValueError when the server cannot score this answer (too long for its context, an error reply)."""

    api_base: str
    model: str  # the model name the server knows (the part of `openai/NAME` after the provider)
    api_key: str | None = None
    timeout_s: float = TIMEOUT_S
    _verdict: str | None = field(default=None, init=False, repr=False)
    _probed: bool = field(default=False, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def __deepcopy__(self, memo: dict[int, Any]) -> ServerScorer:
        # dspy.LM.copy() deep-copies the LM; a lock cannot be copied, and the probe's answer still holds.
        clone = ServerScorer(self.api_base, self.model, self.api_key, self.timeout_s)
        clone._verdict, clone._probed = self._verdict, self._probed
        return clone

    def __call__(self, messages: list[dict[str, str]], answer: str) -> list[float]:
        if not answer:
            return []
        body = {
            "model": self.model,
            "messages": messages,
            "grammar": gbnf_literal(answer),
            "logprobs": True,
            "top_logprobs": 1,
            "temperature": 0.0,
            # A token spells at least one byte, so this bounds the answer; the grammar ends it anyway.
            "max_tokens": len(answer.encode("utf-8")) + 4,
        }
        reply = self._post(body)
        choice = (reply.get("choices") or [{}])[0]
        text = (choice.get("message") or {}).get("content")
        content = (choice.get("logprobs") or {}).get("content") or []
        if text != answer or not content:
            raise ValueError(
                f"the server did not score the given text (it answered {str(text)[:60]!r}, "
                f"finish reason {choice.get('finish_reason')!r}, {len(content)} token log probabilities)"
            )
        return [float(entry["logprob"]) for entry in content]

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        url = self.api_base.rstrip("/") + "/chat/completions"
        try:
            response = httpx.post(url, json=body, headers=headers, timeout=self.timeout_s)
        except httpx.HTTPError as exc:
            raise Unreachable(f"the server could not be asked to score a text ({exc})") from exc
        if response.status_code != 200:
            why = f"HTTP {response.status_code}: {response.text[:200]}"
            raise ValueError(f"the server refused to score a text ({why})")
        try:
            return dict(response.json())
        except ValueError as exc:
            raise ValueError(f"the server's scoring answer is not JSON ({exc})") from exc

    def probe(self) -> str | None:
        """None when the server scores a given text faithfully, else why not; asked once per scorer."""
        with self._lock:
            if not self._probed:
                self._probed = True
                self._verdict = self._ask_probe()
            return self._verdict

    def _has_tokenizer(self) -> bool:
        """llama.cpp's servers expose a tokenizer: the Python server at /extras/tokenize, the C++ one at
        /tokenize (beside /v1). A quick, generation-free sign that `grammar` may be honoured."""
        root = self.api_base.rstrip("/").removesuffix("/v1")
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        for path, body in (("/extras/tokenize", {"input": "a"}), ("/tokenize", {"content": "a"})):
            try:
                reply = httpx.post(root + path, json=body, headers=headers, timeout=30.0)
            except httpx.HTTPError as exc:
                raise Unreachable(f"the server could not be asked to score a text ({exc})") from exc
            if reply.status_code == 200:
                return True
        return False

    def known(self) -> bool | None:
        """The probe's answer (True: it scores faithfully) if it was asked, else None."""
        with self._lock:
            return (self._verdict is None) if self._probed else None

    def _ask_probe(self) -> str | None:
        try:
            if not self._has_tokenizer():
                # Not a llama.cpp server: not sent a chat request it would answer with a generation.
                return "it has no llama.cpp tokenizer endpoint (/extras/tokenize or /tokenize)"
            logprobs = self(PROBE_MESSAGES, PROBE_ANSWER)
        except Unreachable as exc:  # not an answer about the server: asked again next time
            self._probed = False
            return str(exc)
        except ValueError as exc:
            return str(exc)
        if min(logprobs) > PROBE_FLOOR:
            return (
                "its token log probabilities come after the grammar (a forced unlikely text scored "
                f"{min(logprobs):.2f} at worst), not from the model"
            )
        return None
