"""What the CLI prints, rendered to plain text: verdicts in plain words, answers under their questions,
run tables whose counts add up."""

from __future__ import annotations

from dataclasses import replace

import pytest
from rich.console import Console

from cejudge_dspy.cli.display import match_answers, summary_table, verdict_panel
from cejudge_dspy.data import Item
from cejudge_dspy.judges.verdicts import JudgeResult, OrderResult
from cejudge_dspy.metrics import summarize
from cejudge_dspy.runs import Record
from cejudge_dspy.tasks import load_task

CHAT = load_task("chat")
ITEM = Item(
    id="x", mode="pairwise", instruction="Capital of France?", response_a="Paris", response_b="London"
)
QA = "Does the response name the capital of France?"
QB = "Is London the capital of France?"


def text(renderable: object) -> str:
    console = Console(record=True, width=200)
    console.print(renderable)
    return console.export_text()


def pairwise(ab: str, ba: str, answers: list[str] | None = None) -> JudgeResult:
    """A result whose AB order picked `ab` and BA order picked `ba` (both in original positions)."""
    swap = {"A": "B", "B": "A"}
    orders = [OrderResult("AB", ab, ab), OrderResult("BA", ba, swap[ba])]
    verdict = ab if ab == ba else "tie"
    return JudgeResult(
        mode="pairwise",
        status="ok",
        verdict=verdict,
        consistent=ab == ba,
        feedback="Paris is right.",
        answers=answers or [],
        orders=orders,
        checklists={"a": [QA], "b": [QB]},
    )


def test_a_consistent_verdict_names_the_winner_and_each_order_in_original_terms() -> None:
    shown = text(verdict_panel(pairwise("A", "A"), CHAT, item=ITEM))
    assert 'Verdict: A ("Paris") is better: both presentation orders picked it.' in shown
    assert "A shown first, B second: picked A (the response shown first)" in shown
    assert "B shown first, A second: picked A (the response shown second)" in shown
    assert 'Checklist for response B ("London")' in shown


@pytest.mark.parametrize(
    ("ab", "ba", "why"),
    [
        ("B", "A", "each order picked the response shown second: a position preference"),
        ("A", "B", "each order picked the response shown first: a position preference"),
    ],
)
def test_a_tie_says_the_orders_disagree_and_how(ab: str, ba: str, why: str) -> None:
    shown = text(verdict_panel(pairwise(ab, ba), CHAT, item=ITEM))
    assert "Verdict: tie: the two orders disagree, so neither response is preferred" in shown and why in shown
    assert (
        f"A shown first, B second: picked {ab}" in shown and f"B shown first, A second: picked {ba}" in shown
    )


def test_answers_appear_under_the_question_they_answer() -> None:
    answers = [f"{QB} -> No, Paris is.", "Overall Paris wins."]
    shown = text(verdict_panel(pairwise("A", "A", answers), CHAT, item=ITEM))
    lines = [line.strip(" │") for line in shown.splitlines()]
    at = lines.index(f"• {QB}")
    assert lines[at + 1] == "→ No, Paris is."
    assert "Answers that name no checklist question" in shown and "• Overall Paris wins." in shown


def test_match_answers_keeps_unmatched_answers() -> None:
    matched, unmatched = match_answers(
        ["The response names Paris as the capital of France: yes", "fine"], {"a": [QA]}
    )
    assert matched == {("a", 0): ["The response names Paris as the capital of France: yes"]}
    assert unmatched == ["fine"]


def test_a_pointwise_score_says_what_its_level_means() -> None:
    spec = load_task("literary")
    result = JudgeResult(mode="pointwise", status="ok", score=7, feedback="fine")
    assert f"Score: 7 / 7: {spec.scale[7]}"[:60] in " ".join(text(verdict_panel(result, spec)).split())


def test_an_unparsed_result_says_which_stage_failed() -> None:
    result = JudgeResult(mode="pairwise", status="unparsed", error="no JSON", error_stage="VerdictJudgment")
    shown = text(verdict_panel(result, CHAT))
    assert (
        "Unparsed: no verdict or score." in shown and "VerdictJudgment" in shown and "never graded" in shown
    )


def record(i: int, status: str, label: str | None, verdict: str = "A", language: str = "en") -> Record:
    result = pairwise(verdict, verdict) if status == "ok" else None
    if status == "unparsed":
        result = JudgeResult(mode="pairwise", status="unparsed", error="x", error_stage="VerdictJudgment")
    item = Item(id=f"i{i}", mode="pairwise", language=language, label=label, instruction="q")
    return Record(
        f"i{i}", "chat", "cejudge", status, item, result, error="boom" if status == "error" else None
    )


def test_run_table_counts_add_up_to_the_items_judged() -> None:
    records = [
        record(1, "ok", "A"),
        record(2, "ok", "tie"),
        record(3, "unparsed", "B"),
        record(4, "error", "A"),
        record(5, "ok", None),
        record(6, "ok", "B", verdict="B"),
    ]
    summary = summarize(records, CHAT, n_resamples=100)
    c = summary["per_language"]["en"]["counts"]
    assert c == {"items": 6, "scored": 2, "unparsed": 1, "gold_ties": 1, "errors": 1, "no_label": 1}
    assert summary["per_language"]["en"]["n"] == c["scored"]
    assert sum(v for k, v in c.items() if k != "items") == c["items"]
    row = next(line for line in text(summary_table(summary)).splitlines() if line.startswith("│ en "))
    cells = [cell.strip() for cell in row.strip("│").split("│")]
    assert cells == [
        "en",
        "1.000",
        "n < 5",
        "0.667",  # strict: the unparsed item counts as wrong, 2 right of 3
        "6",
        "2",
        "1",
        "1",
        "2",
    ]  # excluded: the error and the unlabelled


def test_no_ci_below_five_scored_items_and_one_from_five() -> None:
    four = summarize([record(i, "ok", "A") for i in range(4)], CHAT, n_resamples=50)
    assert four["per_language"]["en"]["ci_low"] is None
    assert "no CI below 5 scored items" in text(summary_table(four))
    five = summarize([record(i, "ok", "A" if i % 2 else "B") for i in range(5)], CHAT, n_resamples=50)
    assert five["per_language"]["en"]["ci_low"] is not None
    assert "n < 5" not in text(summary_table(five))


def test_the_caption_explains_the_position_numbers() -> None:
    shown = " ".join(text(summary_table(summarize([record(1, "ok", "A")], CHAT, n_resamples=0))).split())
    assert "position consistency 1.000 (same pick in both orders)" in shown
    assert "picked the response shown first 0.500 (0.5: no position bias)" in shown
    assert "final verdict A 1.000, tie 0.000" in shown


def test_a_probability_verdict_says_when_the_orders_disagree() -> None:

    from cejudge_dspy.judges.verdicts import Probabilities
    from cejudge_dspy.judges.verdicts._results import Argmax

    # The orders disagree (argmax tie), the probabilities favour B: the header must not claim both picked it.
    result = replace(
        pairwise("B", "A"),
        verdict="B",
        decision="probability",
        argmax=Argmax(verdict="tie"),
        probabilities=Probabilities(status="ok", p_a=0.3, confidence=0.7, tie_band=0.0, verdict="B"),
    )
    shown = text(verdict_panel(result, CHAT, item=ITEM))
    assert 'Verdict: B ("London") is better: the orders disagree' in shown and "p(A) 0.300" in shown
    assert "both presentation orders picked it" not in shown
    tie = replace(result, verdict="tie", probabilities=replace(result.probabilities, p_a=0.5, verdict="tie"))
    assert "p(A) 0.500 lies inside the tie band" in text(verdict_panel(tie, CHAT, item=ITEM))


def test_a_graded_verdict_shows_each_grade_and_says_no_order_was_shown() -> None:
    from cejudge_dspy.judges.verdicts import GradeResult, Probabilities
    from cejudge_dspy.judges.verdicts._results import Argmax

    result = JudgeResult(
        mode="pairwise",
        status="ok",
        verdict="A",
        feedback="Response A: yes. Paris. Response B: no. London is not.",
        checklists={"a": [QA], "b": [QB]},
        grades={
            "a": GradeResult(label="yes", value=1.0, p_value=0.9),
            "b": GradeResult(label="no", value=0.0, p_value=0.1),
        },
        decided_by={"argmax": "grades", "probability": "grades"},
        decision="probability",
        argmax=Argmax(verdict="A"),
        probabilities=Probabilities(status="ok", p_a=0.9, confidence=0.9, tie_band=0.0, verdict="A"),
    )
    shown = text(verdict_panel(result, CHAT, item=ITEM))
    assert 'Verdict: A ("Paris") is better: the two responses were graded on their own' in shown
    assert 'A ("Paris") graded alone: yes, expected grade 0.90' in shown
    assert 'B ("London") graded alone: no, expected grade 0.10' in shown
    assert "p(A) 0.900 = 0.5 + (expected grade A - B) / 2" in shown and "shown first" not in shown
    assert "Feedback (each response graded on its own)" in shown
    assert "own answer" not in shown
    with_reference = replace(result, details={"reference": {"answer": "Paris", "error": None}})
    assert 'the judge\'s own answer, written first: "Paris"' in text(verdict_panel(with_reference, CHAT))
    failed = replace(result, details={"reference": {"answer": None, "error": "empty reference answer"}})
    assert "written first: none (empty reference answer)" in text(verdict_panel(failed, CHAT))
