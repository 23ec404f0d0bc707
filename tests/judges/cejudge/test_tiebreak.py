"""The likelihood tie-breaker of the graded pairwise judgment (methods/cejudge/tiebreak.py): pairs whose
grades are within the margin are decided by the backbone's likelihood of each response as its answer.
Fake engines only; numbers worked out by hand."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any

import dspy
import pytest

from cejudge_dspy import PairwiseJudge
from cejudge_dspy.errors import InputError
from cejudge_dspy.judges.cejudge._graded import GradedCall, broken_tie
from cejudge_dspy.judges.cejudge._tiebreak import LikelihoodPreference, likelihood_p_a, likelihood_preference
from cejudge_dspy.judges.verdicts import JudgeResult
from tests.judges.cejudge.test_graded import PAIR, grade_logprobs
from tests.support.fakes import AsyncFakeEngine, FakeEngine, fake_lm


@dataclass
class ScoringEngine(FakeEngine):
    """A fake engine that also scores a given answer: `per_token[answer]` for each of its characters
    plus the end of turn (0.0); an answer in `too_long` raises as a context overflow does."""

    per_token: dict[str, float] = field(default_factory=dict)
    too_long: set[str] = field(default_factory=set)
    scored: list[tuple[list[dict[str, str]], str]] = field(default_factory=list)

    def answer_logprobs(self, messages: list[dict[str, str]], answer: str) -> list[float]:
        self.scored.append((messages, answer))
        if answer in self.too_long:
            raise ValueError("answer longer than the scorer's context")
        return [self.per_token[answer]] * len(answer) + [0.0]


def scoring_lm(**kwargs: Any) -> tuple[dspy.LM, ScoringEngine]:
    engine = ScoringEngine(**kwargs)
    return dspy.LM("fake/judge", engine=engine, async_engine=AsyncFakeEngine(engine), cache=False), engine


def test_p_a_is_the_per_token_bradley_terry_preference() -> None:
    assert likelihood_p_a(-1.0, -1.0) == 0.5
    assert likelihood_p_a(-0.5, -2.5) == pytest.approx(1 / (1 + math.exp(-2.0)))  # 0.8808
    assert likelihood_p_a(-3.0, -1.0) == pytest.approx(1 / (1 + math.exp(2.0)))  # 0.1192


def test_likelihood_preference_scores_both_responses_as_answers_to_the_instruction() -> None:
    asked: list[tuple[list[dict[str, str]], str]] = []

    def score(messages: list[dict[str, str]], answer: str) -> list[float]:
        asked.append((messages, answer))
        return {"7": [-0.2, -0.1], "9": [-2.0, -0.5, -0.5]}[answer]

    pref = likelihood_preference(score, "Name a prime number.", "9", "7")
    assert sorted(asked, key=lambda q: q[1]) == [
        ([{"role": "user", "content": "Name a prime number."}], a) for a in ("7", "9")
    ]
    # Means -1.0 (3 tokens) and -0.15 (2): per token, so the shorter answer gains nothing from its length.
    assert (pref.mean_a, pref.mean_b, pref.tokens_a, pref.tokens_b) == (-1.0, -0.15, 3, 2)
    assert pref.p_a == pytest.approx(1 / (1 + math.exp(0.85)), abs=1e-4) and pref.verdict == "B"
    assert "response B more likely" in pref.describe() and "A -1.00, B -0.15" in pref.describe()


def test_both_responses_are_scored_at_once() -> None:
    """A server with several slots scores both texts side by side only if both calls are in flight."""
    both_in = threading.Barrier(2, timeout=10)  # broken (an error) if the second call never comes meanwhile

    def score(messages: list[dict[str, str]], answer: str) -> list[float]:
        both_in.wait()
        return [-0.5] if answer == "7" else [-2.0]

    assert likelihood_preference(score, "Name a prime number.", "9", "7").verdict == "B"


def test_a_response_that_cannot_be_scored_leaves_a_reason_and_no_preference() -> None:
    def score(messages: list[dict[str, str]], answer: str) -> list[float]:
        if answer == "7":
            raise ValueError("too long for the scorer")
        return [-1.0]

    pref = likelihood_preference(score, "Name a prime number.", "9", "7")
    assert pref.p_a is None and pref.verdict is None
    assert pref.reason == "response B could not be scored: too long for the scorer"
    assert "could not decide" in pref.describe()


@pytest.mark.parametrize(
    ("call", "argmax", "p_a", "by"),
    [
        # Equal labels, expected grades within the margin: the likelihood gives both.
        (GradedCall(None, None, True), "B", 0.2, {"argmax": "likelihood", "probability": "likelihood"}),
        # Labels differ (the argmax reading stays theirs), expected grades within the margin.
        (GradedCall("A", None, True), "A", 0.2, {"argmax": "grades", "probability": "likelihood"}),
        # Argmax rule, equal labels whose expected grades separate: p(A) stays the grades'.
        (GradedCall(None, 0.7, True), "B", 0.7, {"argmax": "likelihood", "probability": "grades"}),
    ],
)
def test_broken_tie_fills_only_what_the_grades_left_open(
    call: GradedCall, argmax: str, p_a: float, by: dict[str, str]
) -> None:
    broken = broken_tie(call, LikelihoodPreference(-3.0, -1.6, 2, 2, p_a=0.2))
    assert broken.argmax_verdict == argmax and broken.p_a == p_a
    assert broken.decided_by(shown=False) == by
    assert not broken.needs_orders("probability") and not broken.needs_orders("argmax")


def test_close_grades_are_decided_by_the_likelihood_without_showing_the_pair() -> None:
    lm, engine = scoring_lm(per_token={"9": -2.0, "7": -0.4})
    engine.logprobs = grade_logprobs({"7": 0.8, "9": 0.75})  # both "yes", a gap of 0.05
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = PairwiseJudge("chat", grade_margin=0.1)(**PAIR).result
        argmax_run = PairwiseJudge("chat", grade_margin=0.1, decision="argmax")(**PAIR).result
    assert engine.stage_calls("verdict") == [] and result.orders == []
    # "9": one token at -2.0 and the end of turn at 0 -> mean -1.0; "7": mean -0.2.
    liked = result.details["likelihood"]
    assert (liked["mean_a"], liked["mean_b"], liked["tokens_a"], liked["tokens_b"]) == (-1.0, -0.2, 2, 2)
    assert result.probabilities.p_a == pytest.approx(1 / (1 + math.exp(0.8)), abs=1e-4)  # 0.31
    assert result.verdict == "B" and result.under("argmax").verdict == "B"
    assert result.decided_by == {"argmax": "likelihood", "probability": "likelihood"}
    assert "finds response B more likely" in result.feedback and "Response A: yes." in result.feedback
    # The argmax rule reads equal labels the same way, so both rules agree on the pair.
    assert argmax_run.orders == [] and argmax_run.verdict == "B"
    back = JudgeResult.from_dict(result.to_dict())
    assert back.details["likelihood"] == liked and back.decided_by == result.decided_by


def test_grades_outside_the_margin_never_ask_the_likelihood() -> None:
    lm, engine = scoring_lm(per_token={"9": -0.1, "7": -5.0})
    engine.logprobs = grade_logprobs({"7": 0.9, "9": 0.3})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = PairwiseJudge("chat", grade_margin=0.1)(**PAIR).result
    assert engine.scored == [] and "likelihood" not in result.details
    assert result.verdict == "B" and result.decided_by == {"argmax": "grades", "probability": "grades"}


def test_an_unscorable_response_leaves_the_pair_to_the_grades_alone() -> None:
    lm, engine = scoring_lm(per_token={"9": -0.1}, too_long={"7"})
    engine.logprobs = grade_logprobs({"7": 0.8, "9": 0.75})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = PairwiseJudge("chat", grade_margin=0.1)(**PAIR).result
    assert result.details["likelihood"]["reason"].startswith("response B could not be scored")
    # Margin 0 then: the 0.05 gap decides, for B, and no pair is shown.
    assert result.orders == [] and result.verdict == "B"
    assert result.decided_by == {"argmax": "grades", "probability": "grades"}
    assert "could not decide" in result.feedback


def test_a_backbone_that_cannot_score_falls_back_to_the_grades_and_says_so_once(caplog) -> None:
    lm, engine = fake_lm()  # no answer_logprobs: an HTTP backbone, as far as the judge can tell
    engine.logprobs = grade_logprobs({"7": 0.8, "9": 0.75})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()), caplog.at_level("WARNING", "cejudge_dspy"):
        first = PairwiseJudge("chat", grade_margin=0.1)(**PAIR).result
        PairwiseJudge("chat", grade_margin=0.1)(**PAIR)
    assert first.verdict == "B" and first.orders == []
    assert first.details["likelihood"]["reason"] == "the backbone cannot score a given text"
    assert sum("cannot score a given text" in r.message for r in caplog.records) == 1


def test_exactly_equal_grades_without_a_scorer_still_ask_the_orders() -> None:
    lm, engine = fake_lm()
    engine.logprobs = grade_logprobs({"7": 0.8, "9": 0.8})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = PairwiseJudge("chat", grade_margin=0.1)(**PAIR).result
    assert [o.order for o in result.orders] == ["AB", "BA"]
    assert result.decided_by == {"argmax": "orders", "probability": "orders"}


def test_the_orders_tie_breaker_never_scores_and_an_unknown_one_is_refused() -> None:
    lm, engine = scoring_lm(per_token={"9": -2.0, "7": -0.4})
    engine.logprobs = grade_logprobs({"7": 0.8, "9": 0.75})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = PairwiseJudge("chat", grade_margin=0.1, tie_breaker="orders")(**PAIR).result
    assert engine.scored == [] and len(result.orders) == 2
    with pytest.raises(InputError, match="likelihood, orders"):
        PairwiseJudge("chat", tie_breaker="coin")  # type: ignore[arg-type]


def test_the_panel_and_the_run_table_say_the_likelihood_decided() -> None:
    from rich.console import Console

    from cejudge_dspy.cli.display import summary_table, verdict_panel
    from cejudge_dspy.data import Item
    from cejudge_dspy.metrics import summarize
    from cejudge_dspy.runs import Record
    from cejudge_dspy.tasks import load_task

    lm, engine = scoring_lm(per_token={"9": -2.0, "7": -0.4})
    engine.logprobs = grade_logprobs({"7": 0.8, "9": 0.75})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        close = PairwiseJudge("chat", grade_margin=0.1)(**PAIR).result
        engine.logprobs = grade_logprobs({"7": 0.9, "9": 0.3})
        apart = PairwiseJudge("chat", grade_margin=0.1)(**PAIR).result
    spec = load_task("chat")
    console = Console(record=True, width=220)
    console.print(verdict_panel(close, spec))
    shown = console.export_text()
    assert "grades were too close to decide" in shown and "more likely answer" in shown
    assert "sigmoid(mean token log probability of A - that of B: -1.00 - -0.20)" in shown
    item = Item(
        id="x", mode="pairwise", instruction=PAIR["instruction"], response_a="9", response_b="7", label="B"
    )
    records = [
        Record(id=f"p{i}", task="chat", method="cejudge", status="ok", item=item, result=r)
        for i, r in enumerate((close, apart))
    ]
    summary = summarize(records, spec, n_resamples=0)
    assert summary["decided_by_grades"] == 1 and summary["decided_by_likelihood"] == 1
    console.print(summary_table(summary))
    assert "by the likelihood tie-breaker 1" in console.export_text()
