"""What an OpenAI-compatible server gives the judges, against small fakes on 127.0.0.1 (no model).

Scoring a given text over HTTP (`backbones/_http_scoring.py`): a server that forces the answer with the
grammar and reports the model's own log probabilities can score; one that ignores the grammar, reports
probabilities after it, or is no llama.cpp server cannot, and each is told apart by the one probe.
`features` in each record, and `--require-logprobs` turning a missing feature into an error, against
the gated fake server (which gives no token probabilities). The real server is in test_server_road.py.
"""

from __future__ import annotations

import http.server
import json
import math
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cejudge_dspy.backbones import ServerScorer, capabilities, make_lm, text_scorer
from cejudge_dspy.backbones._http_scoring import (
    END_ALTERNATIVES,
    end_of_turn_logprob,
    gbnf_tokens,
)
from cejudge_dspy.cli import main
from tests.support.gated_server import MODEL as GATED
from tests.support.gated_server import GatedServer

_BOS = 1  # the fake tokenizer's begin-of-text id, which it puts before every text (the scorer strips it)
_END = -0.25  # the end of turn's log probability after any answer, reported as the "" alternative


def _forced(grammar: str) -> str:
    """The text a token-id grammar forces, with the fake's ids (a character's code point), or a text
    grammar (a literal, then the filler's id) forces."""
    if literal := re.fullmatch(r'root ::= "(.*)" <\[(\d+)\]>', grammar, flags=re.S):
        return json.loads(f'"{literal.group(1)}"') + chr(int(literal.group(2)))
    assert re.fullmatch(r"root ::= (<\[\d+\]> ?)+", grammar), grammar
    return "".join(chr(int(i)) for i in re.findall(r"<\[(\d+)\]>", grammar))


def _partial(token: int) -> bool:
    """The fake's byte-level pieces: a Devanagari character's id stands for a token that is not a whole
    UTF-8 character on its own (as Qwen's tokenizer splits them)."""
    return 0x900 <= token < 0x980


class ScoringFake(http.server.BaseHTTPRequestHandler):
    """A chat endpoint that behaves as `server.mode` says: "honours" the grammar with the model's own
    log probabilities (-3 a token), "ignores" it, reports probabilities "after" it (0), or is not a
    llama.cpp server ("no-tokenizer": 404 at the tokenizer paths). Its tokenizer gives a character's code
    point as its id, after a BOS; like llama-cpp-python's server it reports the end of the turn only among
    the alternatives (as "") at the token after the answer. `server.bodies` keeps the requests."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server: Any = self.server
        server.paths.append(self.path)
        server.bodies.append(body)
        if self.path in ("/extras/tokenize", "/tokenize"):
            text = body.get("input", body.get("content", ""))
            tokens: list[Any] = [_BOS, *map(ord, text)]
            if server.mode == "cpp" and self.path == "/tokenize" and body.get("with_pieces"):
                # llama.cpp's C++ server: each id with its piece, text where whole UTF-8, else its bytes
                tokens = [{"id": t, "piece": [0xE0] if _partial(t) else chr(t)} for t in tokens]
            cpp_only = server.mode == "cpp" and self.path == "/extras/tokenize"
            missing = server.mode == "no-tokenizer" or cpp_only
            self._send(404 if missing else 200, {"tokens": tokens})
            return
        if self.path in ("/extras/detokenize", "/detokenize"):
            (token,) = body["tokens"]  # the scorer asks about one id at a time
            if _partial(token):  # llama-cpp-python: a piece that does not decode is a 500
                self._send(500, {"error": {"message": "'utf-8' codec can't decode byte"}})
            else:
                self._send(200, {"text": chr(token)})
            return
        if "grammar" in body and "<[" in body["grammar"] and '"' not in body["grammar"]:
            ids = [int(i) for i in re.findall(r"<\[(\d+)\]>", body["grammar"])]
            if any(_partial(i) for i in ids):  # what llama.cpp's server did: the process aborted
                server.crashed = True
        forced = _forced(body["grammar"]) if "grammar" in body else None
        text = forced if forced is not None and server.mode != "ignores" else "Paris"
        logprob = 0.0 if server.mode == "after" else -3.0
        top = [{"token": "x", "logprob": -9.0}] * int(body.get("top_logprobs") or 0)
        content = [{"token": ch, "logprob": logprob, "top_logprobs": top} for ch in text]
        if content:  # the model's distribution after the answer: the end of turn first
            content[-1]["top_logprobs"] = [{"token": "", "logprob": _END}, *top[1:]]
        message = {"role": "assistant", "content": text}
        choice = {"index": 0, "message": message, "logprobs": {"content": content}, "finish_reason": "stop"}
        usage = {"prompt_tokens": 1, "completion_tokens": len(text), "total_tokens": 1 + len(text)}
        out = {"id": "1", "object": "chat.completion", "created": 0, "model": body.get("model", "m")}
        self._send(200, out | {"choices": [choice], "usage": usage})

    def _send(self, status: int, out: dict[str, Any]) -> None:
        data = json.dumps(out).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def fake() -> Iterator[Any]:
    servers: list[Any] = []

    def start(mode: str) -> str:
        server: Any = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ScoringFake)
        server.mode, server.paths, server.bodies, server.crashed = mode, [], [], False
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        api_base = f"http://127.0.0.1:{server.server_port}/v1"
        start.by_base[api_base] = server  # type: ignore[attr-defined]
        return api_base

    start.by_base = {}  # type: ignore[attr-defined]
    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_server_that_honours_the_grammar_scores_a_given_text(fake: Any) -> None:
    lm = make_lm("openai/judge", api_base=fake("honours"), cache=False)
    assert capabilities(lm).scoring is None  # not asked before a judge needs it
    score = text_scorer(lm)
    assert isinstance(score, ServerScorer) and capabilities(lm).scoring is True
    assert score([{"role": "user", "content": "q"}], 'say "hi"\n') == [-3.0] * 9 + [_END]


def test_the_scorer_forces_the_canonical_tokens_and_reads_the_end_of_turn(fake: Any) -> None:
    api_base = fake("honours")
    scorer = ServerScorer(api_base, "judge")
    messages = [{"role": "user", "content": "What is 8 + 7?"}]
    assert scorer(messages, "15") == [-3.0, -3.0, _END]
    server = fake.by_base[api_base]
    requests = list(zip(server.paths, server.bodies, strict=True))
    tokenized = [b["input"] for p, b in requests if p == "/extras/tokenize"]
    assert tokenized == ["", "\n", "15"]  # the BOS prefix and the filler's id once, then the answer
    chat = [b for p, b in requests if p == "/v1/chat/completions"]
    assert chat == [
        {
            "model": "judge",
            "messages": messages,
            # the server's own ids for "15" (its BOS stripped), then the filler "\n" that makes the
            # distribution after the answer reported
            "grammar": "root ::= <[49]> <[53]> <[10]>",
            "logprobs": True,
            "top_logprobs": END_ALTERNATIVES,
            "temperature": 0.0,
            "max_tokens": 3,
        }
    ]
    assert scorer(messages, "") == [_END]  # the empty answer: only the end of the turn, as in-process


def test_the_end_of_turn_is_read_among_the_alternatives() -> None:
    def alts(*pairs: tuple[str, float]) -> list[dict[str, Any]]:
        return [{"token": t, "logprob": lp} for t, lp in pairs]

    # the only "" alternative: exact
    assert end_of_turn_logprob(alts(("", -0.03), ("\n", -4.0), ("x", -6.0))) == -0.03
    # none: less likely than every alternative listed, so at most the lowest
    assert end_of_turn_logprob(alts(("a", -1.0), ("b", -2.5))) == -2.5
    # two "" tokens (p 0.9 and 0.001): the server shows the second's figure in the first's place, below
    # the entry after it; the estimate is what the others leave, between its neighbours
    merged = end_of_turn_logprob(alts(("", math.log(0.001)), ("a", math.log(0.05)), ("b", math.log(0.01))))
    assert merged == pytest.approx(math.log(1 - 0.061))
    assert math.log(0.9) <= merged <= 0.0
    with pytest.raises(ValueError, match="no alternatives"):
        end_of_turn_logprob([])


def test_the_forcing_grammar_names_token_ids() -> None:
    assert gbnf_tokens([151645]) == "root ::= <[151645]>"
    assert _forced(gbnf_tokens([ord(c) for c in "北京 — ½"])) == "北京 — ½"
    with pytest.raises(ValueError):
        gbnf_tokens([])


def test_backbones_check_prints_what_a_server_gives(fake: Any, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["backbones", "check", "--lm", "openai/judge", "--api-base", fake("honours")]
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["features"] == {"logprobs": True, "scoring": True, "schema": False}, report
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert "logprobs" in table and "likelihood tie-breaker" in table


def test_backbones_check_of_an_unreachable_server_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["backbones", "check", "--lm", "openai/judge", "--api-base", "http://127.0.0.1:9/v1"]
    assert main(argv) == 3
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "cannot be reached" in err and "\n" not in err, err


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("ignores", "did not score the given text"),
        ("after", "come after the grammar"),
        ("no-tokenizer", "no llama.cpp tokenizer endpoint"),
    ],
)
def test_a_server_that_cannot_score_is_told_apart_by_one_probe(fake: Any, mode: str, why: str) -> None:
    lm = make_lm("openai/judge", api_base=fake(mode), cache=False)
    assert text_scorer(lm) is None and capabilities(lm).scoring is False
    assert why in (capabilities(lm).scorer.probe() or "")
    assert text_scorer(lm) is None  # asked once: the answer is remembered


def test_an_unreachable_server_is_asked_again_later() -> None:
    scorer = ServerScorer("http://127.0.0.1:9/v1", "judge")
    assert "could not be asked" in (scorer.probe() or "")
    assert scorer.known() is None  # no answer about the server, so not remembered as one


def test_no_scorer_without_an_api_base() -> None:
    hosted = make_lm("openai/gpt-4o-mini", api_key="k")
    assert capabilities(hosted).scoring is False  # a hosted API is never probed
    assert capabilities(make_lm("simulated:0")).scoring is False


# --- records and --require-logprobs, through the gated fake (no token probabilities) ------------------


@pytest.fixture
def gated() -> Iterator[GatedServer]:
    with GatedServer() as server:
        yield server


def _items(path: Path) -> Path:
    rows = [
        {
            "id": f"i{n}",
            "prompt": f"q{n}",
            "response_a": "a",
            "response_b": "b",
            "label": "A",
            "language": "en",
        }
        for n in range(2)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_each_record_says_what_the_backbone_gave(gated: GatedServer, tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = ["evaluate", "--task", "chat", "--data", str(_items(tmp_path / "items.jsonl"))]
    argv += ["--field", "instruction=prompt", "--out", str(out), "--program", "base", "--method", "direct"]
    assert main([*argv, "--lm", GATED, "--api-base", gated.api_base, "--bootstrap", "20"]) == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(records) == 2
    for record in records:
        assert record["features"]["logprobs"] is False and record["features"]["schema"] is False
        assert record["features"]["scoring"] is not True  # not asked (None) or refused by the probe
    assert json.loads((out / "summary.json").read_text())["features"]["logprobs"] is False


def test_require_logprobs_makes_their_absence_an_error(
    gated: GatedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["judge", "--task", "chat", "--method", "direct", "--instruction", "q"]
    argv += ["--response-a", "a", "--response-b", "b", "--lm", GATED, "--api-base", gated.api_base]
    assert main([*argv, "--no-cache", "--require-logprobs"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: backbone openai/gated returns no token probabilities")
    assert "--require-logprobs" in err[-1] and "Traceback" not in "\n".join(err)
    assert main([*argv, "--no-cache"]) == 0  # without it: the argmax answers, said once


# --- transient server failures: DSPy's retries with backoff (make_lm's num_retries) ----------------------


class FlakyFake(http.server.BaseHTTPRequestHandler):
    """A chat endpoint that answers 503 `server.failures` times, then a plain answer."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        server: Any = self.server
        server.requests += 1
        if server.requests <= server.failures:
            status, out = 503, {"error": {"message": "overloaded, try again", "code": 503}}
        else:
            message = {"role": "assistant", "content": "fine"}
            out = {"id": "1", "object": "chat.completion", "model": "x", "created": 0}
            out |= {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
            out |= {"usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
            status = 200
        data = json.dumps(out).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.mark.parametrize(("failures", "retries", "answered"), [(2, 3, True), (2, 1, False)])
def test_a_server_that_fails_for_a_while_is_retried(failures: int, retries: int, answered: bool) -> None:
    server: Any = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FlakyFake)
    server.failures, server.requests = failures, 0
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        api_base = f"http://127.0.0.1:{server.server_port}/v1"
        lm = make_lm("openai/x", api_base=api_base, num_retries=retries, cache=False)
        if answered:
            assert lm("hi") == ["fine"]
            assert server.requests == failures + 1  # each 503 retried, the answer taken
        else:
            with pytest.raises(Exception, match="503|overloaded"):
                lm("hi")
            assert server.requests == retries + 1  # gave up after its retries
    finally:
        server.shutdown()
        server.server_close()


def test_an_answer_with_pieces_that_are_not_whole_characters_is_forced_as_text(fake: Any) -> None:
    """Forcing the ids of a token that is not a whole UTF-8 character aborted llama.cpp's server (a
    Hindi answer, whose characters Qwen's tokenizer splits into byte pieces): such an answer is forced as
    its text. Each id is asked about once, and an answer's first piece that is not whole decides."""
    api_base = fake("honours")
    scorer = ServerScorer(api_base, "judge")
    messages = [{"role": "user", "content": "q"}]
    assert scorer(messages, "सात") == [-3.0, -3.0, -3.0, _END]
    assert scorer(messages, "7") == [-3.0, _END]  # whole pieces: forced by id, as before
    server = fake.by_base[api_base]
    assert not server.crashed
    grammars = [b["grammar"] for b in server.bodies if "grammar" in b]
    assert grammars[0].startswith('root ::= "सात" <[') and grammars[1] == f"root ::= <[{ord('7')}]> <[10]>"
    asked = [
        b["tokens"][0] for p, b in zip(server.paths, server.bodies, strict=True) if p.endswith("detokenize")
    ]
    assert asked == [ord("स"), ord("7")]  # the first piece that is not whole decides
    assert scorer(messages, "सात") and len([p for p in server.paths if p.endswith("detokenize")]) == len(
        asked
    )


def test_the_cpp_servers_pieces_say_which_tokens_are_whole_without_a_detokenizer_call(fake: Any) -> None:
    """llama.cpp's C++ server gives each token's piece with its id (`with_pieces`): the scorer learns
    from them which tokens are whole characters, and asks its detokenizer nothing."""
    api_base = fake("cpp")
    scorer = ServerScorer(api_base, "judge")
    assert scorer.probe() is None
    messages = [{"role": "user", "content": "q"}]
    assert scorer(messages, "सात") == [-3.0, -3.0, -3.0, _END]  # pieces not whole: forced as text
    assert scorer(messages, "7") == [-3.0, _END]  # whole: forced by id
    server = fake.by_base[api_base]
    grammars = [b["grammar"] for b in server.bodies if "grammar" in b]
    assert grammars[-2].startswith('root ::= "सात" <[')
    assert grammars[-1] == f"root ::= <[{ord('7')}]> <[10]>"
    assert not [p for p in server.paths if p.endswith("detokenize")]
    answers = [b for b in server.bodies if b.get("content") in ("सात", "7")]
    assert len(answers) == 2 and all(b.get("with_pieces") for b in answers)


def test_a_server_that_stops_answering_stops_the_run_rather_than_scoring_nothing(fake: Any) -> None:
    from cejudge_dspy.errors import BackboneError

    api_base = fake("honours")
    scorer = ServerScorer(api_base, "judge")
    assert scorer([{"role": "user", "content": "q"}], "7")
    server = fake.by_base[api_base]
    server.shutdown()
    server.server_close()
    with pytest.raises(BackboneError, match="could not be asked to score"):
        scorer([{"role": "user", "content": "q"}], "8")
