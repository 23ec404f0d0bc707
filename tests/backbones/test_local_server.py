"""The embedded backbone on llama.cpp's own server: the packaged model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M)
started by the package on 127.0.0.1 and reached through DSPy as any user's server is.

Slow: the server loads the model (seconds) and each call decodes on 2 CPU cores. In CI a missing server or
model fails instead of skipping (tests/support/llama_server.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import dspy
import httpx
import pytest

from cejudge_dspy.backbones import _model_file as model_file
from cejudge_dspy.backbones import make_lm, running_servers, stop_all
from cejudge_dspy.backbones._progress import watched
from tests import support
from tests.support.llama_server import llama_server_available

pytestmark = pytest.mark.slow


class Judge(dspy.Signature):
    """Decide which answer to the question is correct, and give short reasons."""

    question: str = dspy.InputField()
    answer_a: str = dspy.InputField()
    answer_b: str = dspy.InputField()
    better: Literal["A", "B"] = dspy.OutputField()
    reasons: list[str] = dspy.OutputField(desc="one to three short reasons")
    confidence: int = dspy.OutputField(desc="1 to 5")


@pytest.fixture(scope="module")
def lm() -> Iterator[dspy.LM]:
    reason = llama_server_available()
    if reason and os.environ.get("CI"):
        pytest.fail(f"{reason}: CI must install cejudge-dspy[embedded]")
    if reason:
        pytest.skip(reason)
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(model_file.ENV_GGUF, raising=False)  # the packaged model, not a user's own file
        statuses: list[str] = []
        built = make_lm("embedded", cache=False, on_status=statuses.append)
        assert any(s.startswith("starting llama.cpp's server") for s in statuses), statuses
        yield built
    stop_all()


def _check_typed(out: dspy.Prediction) -> None:
    assert out.better in ("A", "B")
    assert isinstance(out.reasons, list) and out.reasons and all(isinstance(r, str) for r in out.reasons)
    assert isinstance(out.confidence, int)


def test_the_packaged_model_is_served_on_loopback_and_answers(lm: dspy.LM) -> None:
    assert lm.model.startswith("llama-server/qwen2.5-coder-1.5b-instruct-q4_k_m-")
    assert lm.kwargs["api_base"].startswith("http://127.0.0.1:")
    (text,) = lm("Reply with the single word OK.", max_tokens=8)
    assert text.strip()
    usage = lm.history[-1]["usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    # The same settings share the process's one server; another slot count is another server.
    assert make_lm("embedded", cache=False).kwargs["api_base"] == lm.kwargs["api_base"]
    assert len(running_servers()) == 1
    # Its calls are bounded by its progress (_progress.py), and an async call through that watch is answered.
    assert watched(lm.kwargs["api_base"]) == running_servers()[0].pid
    (text,) = asyncio.run(lm.acall("Reply with the single word OK.", max_tokens=8))
    assert text.strip()


def test_the_json_adapter_parses_typed_outputs_with_and_without_the_schema(lm: dspy.LM) -> None:
    # By default the format is in the prompt only; constrained, the schema becomes llama.cpp's grammar.
    constrained = make_lm("embedded", cache=False, constrained=True)
    for backbone, schema in ((lm, False), (constrained, True)):
        with dspy.context(lm=backbone, adapter=dspy.JSONAdapter()):
            out = dspy.Predict(Judge)(question="Capital of France?", answer_a="Berlin", answer_b="Paris")
        _check_typed(out)
        # With a schema DSPy sends the output model itself; without, its JSON mode ({"type": "json_object"}).
        sent = backbone.history[-1]["kwargs"].get("response_format")
        assert (sent is not None and not isinstance(sent, dict)) is schema, sent


def test_the_likelihood_check_sees_word_salad_and_passes_a_faithful_translation(lm: dspy.LM) -> None:
    """The real model's own likelihood, scored through its server, on two of the obvious pointwise items."""
    from cejudge_dspy.judges._machinery._text_scoring import scorer_of
    from cejudge_dspy.judges.cejudge._likelihood_check import check_likelihood

    rows = support.BENCHMARKS / "obvious" / "pointwise.jsonl"
    by_id = {r["id"]: r for r in map(json.loads, rows.read_text(encoding="utf-8").splitlines())}
    score = scorer_of(lm)
    assert score is not None
    checks = {
        quality: check_likelihood(score, row["source"], row["translation"], "de", "en")
        for quality in ("perfect", "garbled")
        for row in [by_id[f"obvious/de-en/{quality}"]]
    }
    assert checks["perfect"].verdict == "plausible" and checks["garbled"].verdict == "implausible"
    assert checks["perfect"].mean is not None and checks["garbled"].mean is not None
    assert checks["perfect"].mean > checks["garbled"].mean + 2  # nats per token apart, not a near call


def test_calls_in_flight_are_answered_together_and_right(lm: dspy.LM) -> None:
    """Three questions at once on the server's slots, each answered right."""
    questions = {
        "What is 2 + 2? Answer with one number.": "4",
        "What is the capital of France? Answer with one word.": "Paris",
        "Is 7 a prime number? Answer yes or no.": "yes",
    }
    answers: dict[str, str] = {}

    def ask(question: str) -> None:
        (answers[question],) = lm(question, max_tokens=16)

    threads = [threading.Thread(target=ask, args=(q,)) for q in questions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for question, expected in questions.items():
        assert expected.lower() in answers[question].lower(), (question, answers[question])


def test_a_dead_server_is_started_again_on_the_next_request_for_it(lm: dspy.LM) -> None:
    (server,) = running_servers()
    server.process.kill()
    server.process.wait()
    again = make_lm("embedded", cache=False)
    assert again.kwargs["api_base"] != lm.kwargs["api_base"] or running_servers()[0] is not server
    (text,) = again("Reply with the single word OK.", max_tokens=4)
    assert text.strip()


# A judge process that starts the embedded server, says where it is, and waits to be interrupted.
# The address is printed inside the `try`: the test sends SIGINT as soon as it reads the address, and the
# holder, descheduled on a busy machine right after printing, must not meet it outside the `try` (a
# traceback and exit 1 instead of 130).
_HOLDER = """
import sys, threading
from cejudge_dspy.backbones import make_lm
try:
    lm = make_lm("embedded", cache=False, parallel=1)
    print(lm.kwargs["api_base"], flush=True)
    threading.Event().wait()
except KeyboardInterrupt:
    sys.exit(130)
"""


@pytest.mark.parametrize("how", ["ctrl-c", "kill"])
def test_the_server_goes_when_its_process_does(how: str, tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the judge) stops the server at exit; a judge killed outright leaves no server
    behind either (the server watches its parent)."""
    if why := llama_server_available():
        pytest.skip(why)
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        api_base = proc.stdout.readline().strip()
        assert api_base.startswith("http://127.0.0.1:"), proc.stderr.read()[-2000:]
        assert httpx.get(api_base.removesuffix("/v1") + "/health", timeout=30).status_code == 200
        proc.send_signal(signal.SIGINT if how == "ctrl-c" else signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == (130 if how == "ctrl-c" else -signal.SIGKILL)
    # The server's port stops answering once the server has gone: bounded by its parent watch (1 s polls).
    for _ in range(60):
        try:
            httpx.get(api_base.removesuffix("/v1") + "/health", timeout=1)
        except httpx.HTTPError:
            return
        threading.Event().wait(0.5)
    pytest.fail(f"the server at {api_base} outlived its judge ({how})")
