"""Token log probabilities of a *given* answer through an OpenAI-compatible server: the HTTP road's scorer.

Scoring an answer means the log probability of each of its canonical tokens (the tokenizer's own split of
the text) and of the token that closes the assistant's turn. The server has to do it, and the OpenAI API has
no "score this text" call. What works against llama.cpp's servers (its own C++ server, which the local
models run on, and llama-cpp-python's Python server), read from their code and measured
(docs/measurements/server-road.md):

* the answer's token ids from the server's tokenizer (`POST /extras/tokenize`, special tokens parsed as
  in-process; llama.cpp's C++ server: `/tokenize`), then a chat completion whose output a GBNF `grammar`
  of those ids (`root ::= <[id]> <[id]> ...`) forces, with `logprobs`. The server applies its own chat
  template to the messages (the prompt the in-process scorer renders) and reports each generated token's
  log probability from the raw logits, before the grammar filtered them: the model's own figures, as if
  it had written the answer. Forcing ids, not text, keeps the canonical tokenisation: a text grammar lets
  the model pick whichever split of the text it finds likeliest, and the figures then differ. But a
  token that is not a whole UTF-8 character on its own (Devanagari, and many other scripts, split
  characters across byte-level tokens) breaks llama.cpp's grammar: forcing such ids aborted the whole
  server process ("Unexpected empty grammar stack"). Each id is checked once: llama.cpp's C++ server
  gives each token's piece with its id (`/tokenize` with `with_pieces`: text where the piece is whole UTF-8,
  its bytes where not), llama-cpp-python's is asked per id (`/extras/detokenize`: a piece that does not
  decode, or decodes to U+FFFD, is not whole); an answer with such a token is forced as text instead
  (`gbnf_literal`), in the split the model picks.
* the end of the turn. llama-cpp-python stops at an end-of-generation token without reporting it, so it
  cannot be forced and scored like the others. The grammar forces one more, ordinary token (`FILLER`)
  after the answer instead; the alternatives reported at that position (`top_logprobs`) are the model's
  distribution right after the answer, in which the end-of-turn token appears as the empty text (the
  server renders special tokens as ""). `end_of_turn_logprob` reads it there, with the cases where that
  is only a bound (see its docstring). Cost: the prompt once plus one decode step per token, plus the
  tokenizer call.
* not `/v1/completions` with `echo` and `logprobs`: llama-cpp-python 0.3.36 reads each prompt token's
  log probability from the row that *follows* it when the model has no BOS token (Qwen), so the figures
  are shifted by one and meaningless; and it sorts the whole vocabulary per prompt token (seconds each).

A server that ignores `grammar` (a hosted API, Ollama) answers something else, and one that reports
probabilities after the grammar gives about 0 for every forced token: `probe` asks once for an unlikely
text and says which it is, so such a backbone is treated as one that cannot score a given text. Before
that it looks for llama.cpp's tokenizer route (`/extras/tokenize`, `/tokenize`): a server without one is
not sent a generation it would only answer wrongly. Only a backbone built with an `api_base` is probed,
and only when a judge first needs a text scored (`backbones.capabilities` never asks).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import httpx

from cejudge_dspy.backbones._logprobs import checked_logprob
from cejudge_dspy.backbones._slots import slot
from cejudge_dspy.errors import BackboneError

# Forced once by the probe: no model writes it on its own, so getting it back verbatim means the server
# honoured the grammar, and its minimum log probability far below 0 means the figures are the model's own.
PROBE_MESSAGES = [{"role": "user", "content": "What is the capital of France? Answer with one word."}]
PROBE_ANSWER = "Zebra qua 7 Paris"
PROBE_FLOOR = -2.0
TIMEOUT_S = 300.0  # one answer's prompt plus a decode step per token, on a busy CPU server
# Forced after the answer, so that the model's distribution there (where the end of the turn is) gets
# reported: any ordinary single token would do; its own log probability is not used.
FILLER = "\n"
# Alternatives asked for at every forced token; only those after the answer are read (the end of turn
# among them). More would find a less likely end of turn, and cost JSON at every position.
END_ALTERNATIVES = 10
_TIE = 1e-9


class Unreachable(BackboneError):
    """The server did not answer at all (refused, timed out, died): says nothing about what it can do,
    and stops a run like any backbone that cannot be reached (not a text it could not score)."""


def gbnf_literal(text: str) -> str:
    """A GBNF string literal of `text` (quotes, backslashes and control characters escaped)."""
    escaped = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    out = [
        escaped.get(ch) or (f"\\x{ord(ch):02X}" if ord(ch) < 0x20 or ord(ch) == 0x7F else ch) for ch in text
    ]
    return '"' + "".join(out) + '"'


def gbnf_tokens(ids: Sequence[int]) -> str:
    """A GBNF grammar whose only sentence is the token ids `ids`, in order (llama.cpp's `<[id]>` syntax)."""
    if not ids:
        raise ValueError("a forcing grammar needs at least one token")
    return "root ::= " + " ".join(f"<[{int(i)}]>" for i in ids)


def end_of_turn_logprob(alternatives: Sequence[Mapping[str, Any]]) -> float:
    """log p(end of turn) from the alternatives llama-cpp-python reported right after the answer.

    Its server keys the alternatives by their text and renders a special token as "", so the end of turn
    is the "" entry, exact when it is the only "" token among them (or, unnoticed, when a second one is
    the very next alternative). Two cases give a bound instead:
    * no "" entry: the end of turn is less likely than every listed alternative; the lowest is returned
      (an upper bound: the answer looks unfinished to the model, and its mean says so);
    * another "" token among them (another control token, or a byte that is not a whole character): the
      server keeps the first one's place with the last one's figure, which then sits below an entry listed
      after it. The end of turn (taken as the first, the likeliest) is then at most the entry before it and
      at most what the others leave of the probability mass; at least the entry after it."""
    entries = [
        (str(a.get("token")), checked_logprob(a["logprob"], "an alternative after the answer"))
        for a in alternatives
        if a.get("logprob") is not None
    ]
    if not entries:
        raise ValueError("the server reported no alternatives after the answer (top_logprobs)")
    at = next((i for i, (text, _) in enumerate(entries) if text == ""), None)
    if at is None:
        return min(lp for _, lp in entries)
    shown = entries[at][1]
    later = [lp for _, lp in entries[at + 1 :]]
    if all(lp <= shown + _TIE for lp in later):
        return shown
    before = entries[at - 1][1] if at else 0.0
    others = sum(math.exp(lp) for _, lp in entries)  # the "" slot's figure is the other "" token's
    left = math.log(1.0 - others) if others < 1.0 else -math.inf
    return max(min(before, left), max(later))


@dataclass
class ServerScorer:
    """Scores answers through the chat-completions endpoint at `api_base` (see the module docstring).

    Callable as the judges' `Scorer`: `(messages, answer) -> log probabilities` of the answer's
    tokens and the end of its turn, as the in-process scorer gives them; raises ValueError when the server
    cannot score this answer (too long for its context, an error reply)."""

    api_base: str
    model: str  # the model name the server knows (the part of `openai/NAME` after the provider)
    api_key: str | None = None
    timeout_s: float = TIMEOUT_S
    _verdict: str | None = field(default=None, init=False, repr=False)
    _probed: bool = field(default=False, init=False, repr=False)
    _tokenizer: tuple[str, str] | None = field(default=None, init=False, repr=False)  # (path, text field)
    _special: tuple[list[int], int] | None = field(default=None, init=False, repr=False)  # (prefix, filler)
    _whole: dict[int, bool] = field(default_factory=dict, init=False, repr=False)  # id -> a whole character
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)
    # One client for every request: `httpx.post` builds a client per call, whose TLS setup took ~50 ms of
    # each request here, more than a tokenizer call itself (docs/measurements/local-server.md).
    _client: httpx.Client | None = field(default=None, init=False, repr=False, compare=False)
    _client_lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )

    def __deepcopy__(self, memo: dict[int, Any]) -> ServerScorer:
        # dspy.LM.copy() deep-copies the LM; a lock cannot be copied, and the probe's answer still holds.
        clone = ServerScorer(self.api_base, self.model, self.api_key, self.timeout_s)
        clone._verdict, clone._probed = self._verdict, self._probed
        clone._tokenizer, clone._special = self._tokenizer, self._special
        clone._whole = dict(self._whole)
        return clone

    def __call__(self, messages: list[dict[str, str]], answer: str) -> list[float]:
        ids = self.token_ids(answer)
        by_ids = self.whole_pieces(ids)
        body = self.request(messages, ids, None if by_ids else answer)
        reply = self._post("/chat/completions", body)
        choice = (reply.get("choices") or [{}])[0]
        text = (choice.get("message") or {}).get("content")
        content = (choice.get("logprobs") or {}).get("content") or []
        if text != answer + FILLER or not content or (by_ids and len(content) != len(ids) + 1):
            raise ValueError(
                f"the server did not score the given text (it answered {str(text)[:60]!r}, "
                f"finish reason {choice.get('finish_reason')!r}, {len(content)} token log probabilities "
                f"for {len(ids)} tokens and the end of the turn)"
            )
        # An impossible value (NaN, infinite, above 0) is a ValueError: this answer cannot be scored.
        own = [
            checked_logprob(entry.get("logprob"), f"the answer's token {entry.get('token')!r}")
            for entry in content[:-1]
        ]
        return [*own, end_of_turn_logprob(content[-1].get("top_logprobs") or [])]

    def request(
        self, messages: list[dict[str, str]], ids: Sequence[int], text: str | None = None
    ) -> dict[str, Any]:
        """The chat-completion body that forces the token ids `ids` (or, given `text`, that text in the split
        the model picks), then `FILLER`, and reports them."""
        _, filler = self._specials()
        grammar = (
            gbnf_tokens([*ids, filler]) if text is None else f"root ::= {gbnf_literal(text)} <[{filler}]>"
        )
        return {
            "model": self.model,
            "messages": messages,
            "grammar": grammar,
            "logprobs": True,
            "top_logprobs": END_ALTERNATIVES,
            "temperature": 0.0,
            # a text's own split has at most one token per byte
            "max_tokens": (len(ids) if text is None else len(text.encode("utf-8"))) + 1,
        }

    def whole_pieces(self, ids: Sequence[int]) -> bool:
        """Whether every token of `ids` is a whole UTF-8 text on its own, so a grammar of ids can force
        them (see the module docstring); each id is asked about once per scorer."""
        path = (
            "/extras/detokenize"
            if (self._tokenizer or ("/extras/tokenize",))[0] == "/extras/tokenize"
            else "/detokenize"
        )
        for token in dict.fromkeys(ids):
            if token not in self._whole:
                try:
                    reply = self._post(path, {"model": self.model, "tokens": [int(token)]}, root=True)
                except Unreachable:
                    raise
                except ValueError:  # llama-cpp-python answers 500 for a piece that does not decode
                    reply = {}
                piece = reply.get("text", reply.get("content"))
                self._whole[token] = isinstance(piece, str) and bool(piece) and "\ufffd" not in piece
            if not self._whole[token]:
                return False
        return True

    def token_ids(self, text: str) -> list[int]:
        """`text`'s tokens as the server's tokenizer splits it on its own (no BOS; special tokens parsed)."""
        if not text:
            return []
        prefix, _ = self._specials()
        ids = self._tokenize(text)
        return ids[len(prefix) :] if prefix and ids[: len(prefix)] == prefix else ids

    def _specials(self) -> tuple[list[int], int]:
        """What the tokenizer puts before any text (a BOS token where the model adds one); FILLER's id."""
        if self._special is None:
            prefix = self._tokenize("")
            filler = self._tokenize(FILLER)
            filler = filler[len(prefix) :] if filler[: len(prefix)] == prefix else filler
            if len(filler) != 1:
                raise ValueError(f"the server's tokenizer splits {FILLER!r} into {len(filler)} tokens, not 1")
            self._special = (prefix, filler[0])
        return self._special

    def _tokenize(self, text: str) -> list[int]:
        path, key = self._tokenizer or ("/extras/tokenize", "input")
        body: dict[str, Any] = {"model": self.model, key: text}
        if path == "/tokenize":
            # llama.cpp's C++ server gives each token's piece with its id: text where the piece is whole
            # UTF-8, its bytes where not, so `whole_pieces` needs no detokenizer call per new token.
            body["with_pieces"] = True
        reply = self._post(path, body, root=True)
        tokens = reply.get("tokens")
        if isinstance(tokens, list) and tokens and all(isinstance(t, dict) for t in tokens):
            return [self._learn_piece(t) for t in tokens]
        if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
            raise ValueError(f"the server's tokenizer answered no token ids ({str(reply)[:120]})")
        return [int(t) for t in tokens]

    def _learn_piece(self, token: Mapping[str, Any]) -> int:
        """A `with_pieces` entry's id, remembering whether its piece is a whole text (as `whole_pieces`
        asks the detokenizer: a non-empty text without U+FFFD)."""
        token_id, piece = token.get("id"), token.get("piece")
        if not isinstance(token_id, int):
            raise ValueError(f"the server's tokenizer answered no token id ({str(token)[:120]})")
        self._whole[token_id] = isinstance(piece, str) and bool(piece) and "\ufffd" not in piece
        return token_id

    def client(self) -> httpx.Client:
        """This scorer's HTTP client, made on first use (thread-safe, its connections kept open). Its own
        lock: the probe asks through it while holding `_lock`."""
        with self._client_lock:
            if self._client is None:
                self._client = httpx.Client()
            return self._client

    def _post(self, path: str, body: dict[str, Any], *, root: bool = False) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        base = self.api_base.rstrip("/")
        url = (base.removesuffix("/v1") if root else base) + path
        # A completion takes one of the server's slots: where the package started the server, it waits for
        # a free one before its timeout runs (_slots.py); a tokenizer call takes no slot.
        held = slot(self.api_base) if path.endswith("completions") else nullcontext()
        try:
            with held:
                response = self.client().post(url, json=body, headers=headers, timeout=self.timeout_s)
        except httpx.HTTPError as exc:
            raise Unreachable(f"the server at {base} could not be asked to score a text ({exc})") from exc
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

    def _find_tokenizer(self) -> bool:
        """llama.cpp's servers expose a tokenizer: the Python server at /extras/tokenize, the C++ one at
        /tokenize (beside /v1). A quick, generation-free sign that `grammar` may be honoured; the one that
        answers is the one the scorer uses."""
        root = self.api_base.rstrip("/").removesuffix("/v1")
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        for path, key in (("/extras/tokenize", "input"), ("/tokenize", "content")):
            try:
                reply = self.client().post(root + path, json={key: "a"}, headers=headers, timeout=30.0)
            except httpx.HTTPError as exc:
                raise Unreachable(f"the server could not be asked to score a text ({exc})") from exc
            if reply.status_code == 200:
                self._tokenizer = (path, key)
                return True
        return False

    def known(self) -> bool | None:
        """The probe's answer (True: it scores faithfully) if it was asked, else None."""
        with self._lock:
            return (self._verdict is None) if self._probed else None

    def _ask_probe(self) -> str | None:
        try:
            if not self._find_tokenizer():
                # Not a llama.cpp server: not sent a chat request it would answer with a generation.
                return "it has no llama.cpp tokenizer endpoint (/extras/tokenize or /tokenize)"
            logprobs = self(PROBE_MESSAGES, PROBE_ANSWER)
        except Unreachable as exc:  # not an answer about the server: asked again next time
            self._probed = False
            return str(exc)
        except ValueError as exc:
            return str(exc)
        if min(logprobs[:-1]) > PROBE_FLOOR:
            return (
                "its token log probabilities come after the grammar (a forced unlikely text scored "
                f"{min(logprobs[:-1]):.2f} at worst), not from the model"
            )
        return None
