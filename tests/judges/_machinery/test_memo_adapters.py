"""A judging run's adapter (methods/formatting.py) sends DSPy's messages byte for byte and counts its calls.

The memoising adapter keeps the signature's part of each prompt and skips pydantic for plain strings;
these tests compare every stage's messages against DSPy's own adapters and count LM calls in runs
through every path a request can take (first try, ChatAdapter's JSON fallback, the stage's retry through
the other adapter, an adapter class it does not know).
"""

from __future__ import annotations

import asyncio
import typing
from pathlib import Path
from typing import Any

import dspy
import pytest

import cejudge_dspy.judges  # noqa: F401 - imports every method, so every Stage subclass exists
from cejudge_dspy.data import Item
from cejudge_dspy.evaluate import judge_items
from cejudge_dspy.judges import Stage, memo_adapter
from cejudge_dspy.judges._machinery._memo_adapters import MemoChatAdapter, MemoJSONAdapter
from cejudge_dspy.judges.cejudge import PairwiseJudge, PointwiseJudge
from cejudge_dspy.runs import RESULTS
from tests.support.fakes import fake_lm

TEXT = 'Zeile eins\n\nzweite Zeile mit "Anführung", Ümlaut, 日本語 und [[ ## kein Feld ## ]]'


def stages() -> list[type[Stage]]:
    out, todo = [], list(Stage.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if getattr(cls, "signature", None) is not None:
            out.append(cls)
    return sorted(set(out), key=lambda c: c.__qualname__)


def value_for(annotation: Any, k: int = 0) -> Any:
    origin = typing.get_origin(annotation)
    if annotation is str:
        return f"{TEXT} {k}"
    if origin is list:
        return [f"Punkt {k}", 'mit "Zitat"', "日本", ""]
    if origin is dict:
        return {1: "schwach", 7: f"stark {k}"}
    if origin is typing.Literal:
        return typing.get_args(annotation)[0]
    return annotation(3) if isinstance(annotation, type) else TEXT


def inputs_for(signature: type[dspy.Signature], k: int = 0) -> dict[str, Any]:
    return {name: value_for(f.annotation, k) for name, f in signature.input_fields.items()}


def test_every_stage_is_covered() -> None:
    names = {c.__name__ for c in stages()}
    assert {"Concepts", "Translate", "VerdictJudgment", "ScoreJudgment"} <= names and len(names) >= 8


@pytest.mark.parametrize("adapter", [dspy.ChatAdapter(), dspy.JSONAdapter()], ids=["chat", "json"])
@pytest.mark.parametrize("stage", stages(), ids=lambda c: c.__name__)
def test_messages_are_dspys_byte_for_byte(adapter: dspy.Adapter, stage: type[Stage]) -> None:
    signature = stage.signature
    fast = memo_adapter(adapter)
    demo = {
        **inputs_for(signature, 9),
        **{n: value_for(f.annotation, 9) for n, f in signature.output_fields.items()},
    }
    for k in range(2):  # the second call is served from the memo
        for demos in ([], [demo]):
            expected = adapter.format(signature, demos, inputs_for(signature, k))
            assert fast.format(signature, demos, inputs_for(signature, k)) == expected


@pytest.mark.parametrize(
    "value",
    [[1, "zwei"], ["a", None], [], "", 2.5, {"k": ["v"]}, None],
    ids=["mixed-list", "none-in-list", "empty-list", "empty-text", "float", "dict", "none"],
)
def test_other_values_go_through_dspys_formatting(value: Any) -> None:
    signature = dspy.Signature("question: list[str], note: str -> answer: str")

    def outcome(adapter: dspy.Adapter) -> Any:
        try:
            return adapter.format(signature, [], {"question": value, "note": value})
        except Exception as exc:  # DSPy rejects some of these (a number in a text list): so must we
            return type(exc)

    for adapter in (dspy.ChatAdapter(), dspy.JSONAdapter()):
        assert outcome(memo_adapter(adapter)) == outcome(adapter)


def test_a_signature_changed_in_place_is_formatted_again() -> None:
    signature = dspy.Signature("text: str -> summary: str", "Summarise.")
    fast, plain = memo_adapter(None), dspy.ChatAdapter()
    first = fast.format_system_message(signature)
    signature.instructions = "Summarise in one line."
    assert fast.format_system_message(signature) == plain.format_system_message(signature) != first
    signature.model_fields["summary"].json_schema_extra["desc"] = "one line"
    assert fast.format_system_message(signature) == plain.format_system_message(signature)
    assert "one line" in fast.format_system_message(signature)


def test_memo_adapter_keeps_the_adapters_settings_and_leaves_others_alone() -> None:
    chat = memo_adapter(dspy.ChatAdapter(use_json_adapter_fallback=False))
    assert isinstance(chat, MemoChatAdapter) and chat.use_json_adapter_fallback is False
    assert isinstance(memo_adapter(dspy.JSONAdapter()), MemoJSONAdapter)
    assert isinstance(memo_adapter(None), MemoChatAdapter)  # DSPy's default
    xml = dspy.XMLAdapter()
    assert memo_adapter(xml) is xml
    assert isinstance(chat._make_json_adapter_fallback(), MemoJSONAdapter)


def pairwise_items(n: int) -> list[Item]:
    return [
        Item(
            id=f"i{k}",
            mode="pairwise",
            instruction=f"Frage {k}?",
            response_a=f"Antwort A{k}.",
            response_b=f"Antwort B{k}.",
            language="de",
            label="A",
        )
        for k in range(n)
    ]


def run(items: list[Item], program: dspy.Module, lm: dspy.LM, out: Path, **context: Any) -> int:
    """The LM calls the run's records count."""
    with dspy.context(lm=lm, **context):
        records = asyncio.run(
            judge_items(items, program, out / RESULTS, task="chat", method="m", concurrency=3)
        )
    return sum(r.result.usage.calls for r in records)


class OwnAdapter(dspy.ChatAdapter):
    """An adapter class formatting.py does not know: counted by the LM callback instead."""


@pytest.mark.parametrize(
    "context",
    [{}, {"adapter": dspy.JSONAdapter()}, {"adapter": OwnAdapter()}],
    ids=["default", "json", "own-adapter"],
)
def test_a_run_counts_every_lm_call_once(tmp_path: Path, context: dict[str, Any]) -> None:
    lm, engine = fake_lm()
    counted = run(pairwise_items(4), PairwiseJudge("chat"), lm, tmp_path, **context)
    assert counted == len(engine.calls) and {c.stage for c in engine.calls} >= {"concepts", "verdict"}


def test_a_run_counts_chatadapters_json_fallback(tmp_path: Path) -> None:
    # The judgment never parses: ChatAdapter falls back to JSON, a second call, per order.
    lm, engine = fake_lm({"verdict": lambda i: "I cannot decide."})
    assert run(pairwise_items(2), PairwiseJudge("chat"), lm, tmp_path) == len(engine.calls)
    verdicts = [c.json_mode for c in engine.calls if c.stage == "verdict"]
    assert len(verdicts) == 2 * 2 * 2 and sum(verdicts) == 4  # 2 items, 2 orders, ChatAdapter then JSON


def test_a_run_counts_the_stages_retry_through_the_other_adapter(tmp_path: Path) -> None:
    # A score off the scale parses but fails its check: the stage retries through JSONAdapter.
    lm, engine = fake_lm({"score": lambda i: {"answers": [], "feedback": "f", "score": 100}})
    item = Item(id="p", mode="pointwise", instruction="Quelle.", response="Source.", language="de", label=3.0)
    with dspy.context(lm=lm):
        (record,) = asyncio.run(
            judge_items([item], PointwiseJudge("literary"), tmp_path / RESULTS, task="literary", method="m")
        )
    assert record.status == "unparsed"
    assert record.result.usage.calls == len(engine.calls) == 6 + 2  # the score twice
    assert [c.json_mode for c in engine.calls if c.stage == "score"] == [False, True]


def test_a_runs_memo_holds_two_texts_per_stage_whatever_the_run_length(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cejudge_dspy.judges._machinery import _judging_run as runtime

    made: list[dspy.Adapter] = []

    def spy(adapter: dspy.Adapter | None) -> dspy.Adapter:
        made.append(memo_adapter(adapter))
        return made[-1]

    monkeypatch.setattr(runtime, "memo_adapter", spy)
    lm, engine = fake_lm()
    program = PairwiseJudge("chat")
    assert run(pairwise_items(10), program, lm, tmp_path) == len(engine.calls) > 10
    (adapter,) = made
    # System message and output reminder for each stage's signature (Predict makes no new signatures).
    signatures = {p.signature for _, p in program.named_predictors()}
    assert len(adapter._memo) == 2 * len(signatures) and len(signatures) >= 5
