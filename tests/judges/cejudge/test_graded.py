"""The graded pairwise judgment: each response graded on its own, the pairwise judgment as tie-breaker;
and the pointwise response-language check. Fake engines only; numbers worked out by hand."""

from __future__ import annotations

import dspy
import pytest

from cejudge_dspy import PairwiseJudge, PointwiseJudge
from cejudge_dspy.judges.cejudge._graded import graded_call
from cejudge_dspy.judges.cejudge._language_check import check_language
from cejudge_dspy.judges.verdicts import GradeResult, JudgeResult, grade_value, graded_preference
from tests.support.fakes import fake_lm, scripted_logprobs

PAIR = {"instruction": "Name a prime number.", "response_a": "9", "response_b": "7"}
# P(es) 0.87 (the rest on gl, pt, ...), P(en) 0: no language is sure, yet English is ruled out.
SPANISH = (
    "La luz de la luna caía sobre la superficie tranquila del lago, y a lo lejos se oyeron unos ladridos."
)


def grade(label: str | None, p_value: float | None = None) -> GradeResult:
    values = {"yes": 1.0, "partly": 0.5, "no": 0.0}
    return GradeResult(label=label, value=values.get(label or ""), p_value=p_value)  # type: ignore[arg-type]


def test_grade_arithmetic_on_hand_computed_numbers() -> None:
    assert grade_value({"yes": 0.6, "partly": 0.3, "no": 0.1}) == pytest.approx(0.75)
    assert graded_preference(0.75, 0.25) == pytest.approx(0.75)
    assert graded_preference(0.2, 0.9) == pytest.approx(0.15)


@pytest.mark.parametrize(
    ("a", "b", "argmax", "p_a", "by_probability", "by_argmax"),
    [
        (grade("yes", 0.9), grade("no", 0.2), "A", 0.85, False, False),  # both rules decide
        (grade("yes", 0.62), grade("yes", 0.55), None, None, True, True),  # same label, gap 0.07 < 0.1
        (grade("yes", 0.7), grade("yes", 0.4), None, 0.65, False, True),  # labels tie, expected grades don't
        (grade("partly", 0.50), grade("yes", 0.55), "B", None, True, False),  # gap 0.05 < 0.1
        (grade("no"), grade("yes"), "B", None, False, False),  # no probabilities: the labels decide
        (grade(None), grade("yes", 0.9), None, None, True, True),  # an unparsed grade decides nothing
    ],
)
def test_graded_call_decides_only_where_the_grades_separate(
    a: GradeResult,
    b: GradeResult,
    argmax: str | None,
    p_a: float | None,
    by_probability: bool,
    by_argmax: bool,
) -> None:
    """`by_*`: whether a run under that rule needs the pairwise judgment for the pair."""
    call = graded_call(a, b, margin=0.1)
    assert call.argmax_verdict == argmax
    assert call.p_a == (None if p_a is None else pytest.approx(p_a))
    assert call.needs_orders("probability") is by_probability and call.needs_orders("argmax") is by_argmax


def test_equal_labels_decided_by_expected_grades_read_as_a_tie_under_the_argmax_rule() -> None:
    lm, engine = fake_lm()  # both graded "yes"
    engine.logprobs = grade_logprobs({"7": 0.9, "9": 0.6})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = PairwiseJudge("chat")(**PAIR).result
        argmax_run = PairwiseJudge("chat", decision="argmax")(**PAIR).result
    assert result.orders == [] and result.verdict == "B" and result.under("argmax").verdict == "tie"
    assert result.decided_by == {"argmax": "grades", "probability": "grades"}
    assert len(argmax_run.orders) == 2  # a run under the argmax rule asks the pairwise judgment


def grade_logprobs(p_yes: dict[str, float]):
    """Scripted logprobs: at a grade's label token, P(yes) per response text, the rest on "no"."""

    def logprobs(stage: str, inputs: dict[str, str], text: str):
        if stage != "grade":
            return scripted_logprobs(text)
        p = p_yes[inputs["response"]]
        return scripted_logprobs(text, {'"fulfils": "': {"yes": p, "no": 1 - p}})

    return logprobs


def test_separated_grades_decide_without_showing_the_pair() -> None:
    rules = {"grade": lambda i: {"fulfils": "yes" if i["response"] == "7" else "no", "feedback": "fb"}}
    lm, engine = fake_lm(rules)
    engine.logprobs = grade_logprobs({"7": 0.9, "9": 0.3})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = PairwiseJudge("chat")(**PAIR).result
    assert engine.stage_calls("verdict") == [] and result.orders == []
    grades = {c.inputs["response"]: c for c in engine.stage_calls("grade")}
    assert set(grades) == {"9", "7"} and "checklist" in grades["7"].inputs  # judged with its checklist
    assert [result.grades[k].p_value for k in "ab"] == pytest.approx([0.3, 0.9])
    assert result.probabilities.p_a == pytest.approx(0.5 + (0.3 - 0.9) / 2)  # 0.2
    assert result.verdict == "B" and result.under("argmax").verdict == "B"
    assert result.decided_by == {"argmax": "grades", "probability": "grades"}
    assert result.consistent is None and "Response B: yes." in result.feedback
    back = JudgeResult.from_dict(result.to_dict())
    assert back.grades == result.grades and back.decided_by == result.decided_by


@pytest.mark.parametrize(("p_nine", "margin"), [(0.75, 0.1), (0.8, 0.0)])
def test_close_grades_leave_the_pair_to_the_pairwise_judgment_in_both_orders(
    p_nine: float, margin: float
) -> None:
    """A gap of 0.05 within a 0.1 margin; or, with the default margin 0, an exact tie."""
    lm, engine = fake_lm()  # both graded "yes"
    engine.logprobs = grade_logprobs({"7": 0.8, "9": p_nine})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = PairwiseJudge("chat", grade_margin=margin, tie_breaker="orders")(**PAIR).result
    assert len(engine.stage_calls("verdict")) == 2 and [o.order for o in result.orders] == ["AB", "BA"]
    assert result.decided_by == {"argmax": "orders", "probability": "orders"}
    assert result.verdict == "tie"  # the fake says "A" in both orders: disagreeing orders


def test_an_unparsable_grade_is_recorded_and_the_orders_decide() -> None:
    lm, _ = fake_lm(
        {
            "grade": lambda i: (
                {"fulfils": "maybe", "feedback": "?"}
                if i["response"] == "9"
                else {"fulfils": "yes", "feedback": "ok"}
            )
        }
    )
    with dspy.context(lm=lm):
        result = PairwiseJudge("chat")(**PAIR).result
    assert result.ok and result.grades["a"].label is None and "fulfils" in (result.grades["a"].error or "")
    assert len(result.orders) == 2


def test_the_papers_pairwise_judgment_is_one_option_away() -> None:
    lm, engine = fake_lm()
    with dspy.context(lm=lm):
        result = PairwiseJudge("chat", judgment="pairwise")(**PAIR).result
    assert engine.stage_calls("grade") == [] and result.grades == {} and len(result.orders) == 2


@pytest.mark.parametrize(
    ("text", "expected", "verdict", "detected"),
    [
        ("Every evening the old fisherman sat by the harbour and watched the sun sink.", "en", "yes", "en"),
        ("Chaque soir, le vieux pêcheur s'asseyait au port et regardait le soleil.", "en", "no", "fr"),
        ("Der alte Fischer saß jeden Abend am Hafen und sah zu, wie die Sonne versank.", "en", "no", "de"),
        ("月光洒在安静的湖面上，远处传来几声狗叫。月光洒在安静的湖面上。", "zh", "yes", None),
        ("Paris", "de", "unsure", None),  # too short to tell
        (SPANISH, "en", "no", "es"),
        ("月光洒在安静的湖面上，远处传来几声狗叫。", "en", "no", "zh"),  # 17 Han characters suffice
    ],
)
def test_language_check(text: str, expected: str, verdict: str, detected: str | None) -> None:
    check = check_language(text, expected)
    assert check.verdict == verdict
    if detected is not None:
        assert check.detected == detected


def test_a_translation_in_the_wrong_language_gets_the_lowest_level_without_an_llm_call() -> None:
    lm, engine = fake_lm()
    source = "Der alte Fischer saß jeden Abend am Hafen und sah zu, wie die Sonne im Meer versank."
    french = "Chaque soir, le vieux pêcheur s'asseyait au port et regardait le soleil se coucher."
    with dspy.context(lm=lm):
        result = PointwiseJudge("literary")(
            instruction=source, response=french, language="de", response_language="en"
        ).result
        assert engine.calls == [] and result.score == 1 and result.ok
        assert result.decided_by["probability"] == "language check" and "French" in result.feedback
        assert result.details["language_check"]["detected"] == "fr"
        judged = PointwiseJudge("literary", language_check=False)(
            instruction=source, response=french, language="de", response_language="en"
        ).result
    assert judged.score == 5 and engine.stage_calls("score")  # the fake judge's score
    assert engine.stage_calls("score")[0].inputs["response_language"] == "English"
