"""The CE-Judge data flow, pinned with a scripted fake backbone (tests/support/fakes.py)."""

from __future__ import annotations

import dspy
import pytest

from cejudge_dspy.errors import InputError, TaskError
from cejudge_dspy.judges.cejudge import PairwiseJudge, PointwiseJudge
from cejudge_dspy.judges.verdicts import OrderResult, reconcile, swap_verdict
from tests.support.fakes import fake_lm


def run(judge: dspy.Module, lm: dspy.LM, **inputs: str) -> dspy.Prediction:
    with dspy.context(lm=lm):
        return judge(**inputs)


def test_pointwise_flow_translates_for_checklists_but_judges_originals() -> None:
    lm, engine = fake_lm()
    pred = run(
        PointwiseJudge("literary"),
        lm,
        instruction="Der Hund schläft.",
        response="The dog sleeps.",
        language="de",
        response_language="en",
    )
    assert pred.result.status == "ok" and pred.score == 5
    # Concepts come from the original texts.
    assert sorted(c.inputs["text"] for c in engine.stage_calls("concepts")) == [
        "Der Hund schläft.",
        "The dog sleeps.",
    ]
    # Only the German source is translated; the English response is not.
    assert [c.inputs["text"] for c in engine.stage_calls("translate")] == ["Der Hund schläft."]
    # r2i sees the (already English) response plus instruction concepts; i2r the translated instruction.
    (r2i,) = engine.stage_calls("checklist_r2i")
    (i2r,) = engine.stage_calls("checklist_i2r")
    assert (
        r2i.inputs["response"] == "The dog sleeps."
        and "concept of Der Hund" in r2i.inputs["instruction_concepts"]
    )
    assert i2r.inputs["instruction"] == "EN[Der Hund schläft.]"
    assert "concept of The dog" in i2r.inputs["response_concepts"]
    # The judgment sees the untranslated texts and the concatenated checklist (r2i then i2r).
    (judge,) = engine.stage_calls("score")
    assert (
        judge.inputs["instruction"] == "Der Hund schläft." and judge.inputs["response"] == "The dog sleeps."
    )
    assert pred.checklists["response"] == ["r2i about The dog sleeps.?", "i2r about EN[Der Hund schläft.]?"]
    assert pred.translations == {"instruction": "EN[Der Hund schläft.]"}
    # ... and, by default, the judge's own translation of the source into English: into English, the
    # translation stage 2 wrote for the checklists (one call serves both; test_reference.py).
    assert judge.inputs["reference"] == "EN[Der Hund schläft.]"
    assert engine.stage_calls("reference_translation") == []
    # 2 concepts + 1 translation + 2 checklists + 1 judgment.
    assert pred.usage.calls == 6 and len(engine.calls) == 6


def test_pairwise_both_orders_share_checklists_and_instruction_work() -> None:
    lm, engine = fake_lm()
    pred = run(
        PairwiseJudge("chat", judgment="pairwise"),
        lm,
        instruction="Wie spät ist es?",
        response_a="Drei Uhr.",
        response_b="Keine Ahnung.",
        language="de",
    )
    # 3 concepts + 3 translations + 4 checklists + 2 judgments (A/B and B/A).
    assert pred.usage.calls == 12 and len(engine.calls) == 12
    assert len(engine.stage_calls("checklist_r2i")) == 2 and len(engine.stage_calls("verdict")) == 2
    ab, ba = engine.stage_calls("verdict")
    # The swapped order shows B first with B's checklist, and reuses the same checklists.
    assert {ab.inputs["response_a"], ba.inputs["response_a"]} == {"Drei Uhr.", "Keine Ahnung."}
    first = ab if ab.inputs["response_a"] == "Drei Uhr." else ba
    swapped = ba if first is ab else ab
    assert swapped.inputs["checklist_a"] == first.inputs["checklist_b"]
    assert swapped.inputs["checklist_b"] == first.inputs["checklist_a"]
    # The fake always says "A": the two orders disagree, so the verdict is a tie, inconsistent.
    assert pred.verdict == "tie" and pred.consistent is False
    assert [o.verdict for o in pred.orders] == ["A", "B"]


def test_pairwise_consistent_verdict_is_mapped_back_from_swapped_order() -> None:
    # A judge that always prefers the answer "Drei Uhr." wherever it is shown.
    def prefer(inputs: dict[str, str]) -> dict[str, object]:
        return {
            "answers": [],
            "feedback": "ok",
            "verdict": "A" if inputs["response_a"] == "Drei Uhr." else "B",
        }

    lm, _ = fake_lm({"verdict": prefer})
    pred = run(
        PairwiseJudge("chat"),
        lm,
        instruction="What time is it?",
        response_a="Keine Ahnung.",
        response_b="Drei Uhr.",
    )
    assert pred.verdict == "B" and pred.consistent is True
    assert [(o.order, o.shown_verdict, o.verdict) for o in pred.orders] == [
        ("AB", "B", "B"),
        ("BA", "A", "B"),
    ]


def test_single_order_reproduces_the_paper_and_english_is_never_translated() -> None:
    lm, engine = fake_lm()
    pred = run(
        PairwiseJudge("reasoning", orders="single", judgment="pairwise"),
        lm,
        instruction="2+2?",
        response_a="4",
        response_b="5",
    )
    assert pred.verdict == "A" and pred.consistent is None
    assert engine.stage_calls("translate") == [] and pred.translations == {}
    # 3 concepts + 4 checklists + 1 judgment: the paper's 11 calls minus the 3 skipped translations.
    assert pred.usage.calls == 8


def test_shared_work_across_items_computes_the_instruction_once() -> None:
    lm, engine = fake_lm()
    judge = PointwiseJudge("literary")
    for response in ("Der Hund schläft.", "Der Hund ruht."):
        pred = run(
            judge, lm, instruction="The dog sleeps.", response=response, language="en", response_language="de"
        )
    assert [c.inputs["text"] for c in engine.stage_calls("concepts")].count("The dog sleeps.") == 1
    # Second item: concepts(instruction) and the reference translation of the source reused; i2r depends on
    # response concepts so it is new.
    assert [c.inputs["text"] for c in engine.stage_calls("reference_translation")] == ["The dog sleeps."]
    assert pred.usage.reused == 2 and pred.usage.calls == 5


def test_unparseable_judgment_is_an_explicit_outcome_after_one_retry() -> None:
    lm, engine = fake_lm({"verdict": lambda i: "I cannot decide."})
    pred = run(PairwiseJudge("chat", orders="single"), lm, instruction="q", response_a="x", response_b="y")
    assert pred.result.status == "unparsed" and pred.verdict is None
    assert "order AB" in pred.error and pred.error_stage == "VerdictJudgment"
    # ChatAdapter's own JSON fallback is the one retry: two judgment calls, then it gives up.
    assert len(engine.stage_calls("verdict")) == 2
    assert pred.checklists["a"]  # what was computed before the failure is kept
    assert pred.details["raw"] == "I cannot decide." and pred.orders[0].raw == "I cannot decide."


def test_out_of_range_score_is_retried_through_json_then_unparsed() -> None:
    lm, engine = fake_lm({"score": lambda i: {"answers": [], "feedback": "f", "score": 100}})
    pred = run(PointwiseJudge("literary"), lm, instruction="a", response="b")
    assert pred.result.status == "unparsed" and pred.score is None
    assert "not a level of the scale 1-7" in pred.error and '"score": 100' in pred.details["raw"]
    calls = engine.stage_calls("score")
    assert [c.json_mode for c in calls] == [False, True]


def test_stage_failure_early_in_the_pipeline_names_the_stage() -> None:
    lm, _ = fake_lm({"concepts": lambda i: {"concepts": []}})
    pred = run(PointwiseJudge("literary"), lm, instruction="a", response="b")
    assert pred.result.status == "unparsed" and pred.error_stage == "Concepts" and "empty" in pred.error


@pytest.mark.parametrize(
    ("inputs", "field"),
    [
        ({"instruction": "", "response": "x"}, "instruction"),
        ({"instruction": "q", "response": "  "}, "response"),
        ({"instruction": "q", "response": None}, "response"),
    ],
)
def test_bad_texts_name_the_field(inputs: dict[str, str], field: str) -> None:
    lm, engine = fake_lm()
    with pytest.raises(InputError, match=f"field '{field}'"):
        run(PointwiseJudge("literary"), lm, **inputs)
    assert engine.calls == []


def test_unknown_language_and_wrong_mode_task_are_clear_errors() -> None:
    lm, _ = fake_lm()
    with pytest.raises(InputError, match="unknown language 'xx-yy'|unknown language"):
        run(PairwiseJudge("chat"), lm, instruction="q", response_a="a", response_b="b", language="xx-yy")
    with pytest.raises(TaskError, match="pointwise"):
        PairwiseJudge("literary")
    with pytest.raises(TaskError, match="did you mean 'chat'"):
        PairwiseJudge("caht")


def test_swap_and_reconcile_are_pure_and_invertible() -> None:
    assert swap_verdict(swap_verdict("A")) == "A" and swap_verdict("A") == "B"

    def order(o: str, v: str | None) -> OrderResult:
        return OrderResult(order=o, verdict=v, shown_verdict=v)  # type: ignore[arg-type]

    assert reconcile([order("AB", "A"), order("BA", "A")]) == ("A", True)
    assert reconcile([order("AB", "A"), order("BA", "B")]) == ("tie", False)
    assert reconcile([order("AB", "B")]) == ("B", None)
    assert reconcile([order("AB", "A"), order("BA", None)]) == (None, None)


def test_direct_baseline_is_one_call_per_order_with_the_same_swap() -> None:
    from cejudge_dspy.judges import DirectPairwiseJudge, DirectPointwiseJudge

    def prefer(inputs: dict[str, str]) -> dict[str, object]:
        return {"feedback": "ok", "verdict": "A" if inputs["response_a"] == "Drei Uhr." else "B"}

    lm, engine = fake_lm({"verdict": prefer, "score": lambda i: {"feedback": "f", "score": 3}})
    pred = run(
        DirectPairwiseJudge("chat"), lm, instruction="q", response_a="Keine Ahnung.", response_b="Drei Uhr."
    )
    assert pred.verdict == "B" and pred.consistent is True and pred.usage.calls == 2
    assert [o.shown_verdict for o in pred.orders] == ["B", "A"] and pred.method == "direct"
    assert {c.stage for c in engine.calls} == {"verdict"}  # no concepts, translations or checklists
    score = run(DirectPointwiseJudge("literary"), lm, instruction="q", response="r")
    assert score.score == 3 and score.usage.calls == 1


def test_each_checklist_starts_when_its_own_inputs_are_in() -> None:
    """The response->instruction checklist needs the instruction's concepts and the response's English, not
    the instruction's translation: a slow translation of the source holds back only the other direction."""
    import asyncio

    lm, engine = fake_lm()
    seen_when_translated: list[str] = []

    class Slow:
        name = "slow"

        async def translate(self, text: str, language: str) -> str:
            for _ in range(200):  # until the other direction's checklist was asked for (or 2 s)
                if engine.stage_calls("checklist_r2i"):
                    break
                await asyncio.sleep(0.01)
            seen_when_translated.extend(c.stage for c in engine.calls)
            return f"EN[{text}]"

    judge = PointwiseJudge("literary", translator=Slow(), likelihood_check=False, reference=False)
    pred = run(judge, lm, instruction="Der Hund schläft.", response="The dog sleeps.", language="de",
               response_language="en")  # fmt: skip
    assert "checklist_r2i" in seen_when_translated and "checklist_i2r" not in seen_when_translated
    assert engine.stage_calls("checklist_i2r")[0].inputs["instruction"] == "EN[Der Hund schläft.]"
    assert pred.checklists["response"] == ["r2i about The dog sleeps.?", "i2r about EN[Der Hund schläft.]?"]
