"""The translation-likelihood check: word salad gets the lowest level from the backbone's own likelihood.

Fake scorers and engines throughout; the real model's figures are in test_embedded_slow.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import dspy
import pytest

from cejudge_dspy import PointwiseJudge
from cejudge_dspy.judges import prompt_fingerprint
from cejudge_dspy.judges._machinery._text_scoring import scorer_of
from cejudge_dspy.judges.cejudge._likelihood_check import MEAN_FLOOR, check_likelihood, translation_messages
from cejudge_dspy.tasks import load_task
from tests.support.fakes import AsyncFakeEngine, FakeEngine, fake_lm

SOURCE = "Der alte Fischer saß jeden Abend am Hafen und sah zu, wie die Sonne im Meer versank."
GOOD = "Every evening the old fisherman sat at the harbour and watched the sun sink into the sea."
SALAD = "sea the harbour sink watched evening fisherman the into sat old and every sun the at"


@dataclass
class ScoringEngine(FakeEngine):
    """A fake engine that can also score a given answer: `low` answers get -7 per token, others -1."""

    low: set[str] = field(default_factory=set)
    scored: list[tuple[list[dict[str, str]], str]] = field(default_factory=list)

    def answer_logprobs(self, messages: list[dict[str, str]], answer: str) -> list[float]:
        self.scored.append((messages, answer))
        return [-7.0 if answer in self.low else -1.0] * 12


def scoring_lm(**kwargs: Any) -> tuple[dspy.LM, ScoringEngine]:
    engine = ScoringEngine(**kwargs)
    return dspy.LM("fake/judge", engine=engine, async_engine=AsyncFakeEngine(engine), cache=False), engine


def test_the_check_compares_the_mean_token_log_probability_with_the_floor() -> None:
    asked: list[Any] = []

    def scorer(values: list[float]) -> Any:
        def score(messages: list[dict[str, str]], answer: str) -> list[float]:
            asked.append((messages, answer))
            return values

        return score

    salad = [-6.0, -5.0, -4.5, -5.5, -6.0, -5.0, -4.0, -6.0, -0.2]  # the last: the end of turn
    low = check_likelihood(scorer(salad), SOURCE, SALAD, "de", "en")
    assert low.verdict == "implausible" and low.minimum == -6.0
    assert low.mean == pytest.approx(-42.2 / 9, abs=1e-4)
    assert low.tokens == 9 and "implausible" in low.describe() and "-4.69" in low.describe()
    good = [-1.0, -0.5, -2.0, -0.5, -1.0, -0.1, -0.3, -0.4, -0.1]
    high = check_likelihood(scorer(good), SOURCE, GOOD, "de", "en")
    assert high.verdict == "plausible" and high.mean == pytest.approx(-5.9 / 9, abs=1e-4)
    # The floor is strict: exactly at it is plausible.
    assert check_likelihood(scorer([MEAN_FLOOR] * 9), SOURCE, GOOD, "de", "en").verdict == "plausible"
    # Eight tokens of its own (plus the end of turn) at least: a short title is left to the judge.
    short = check_likelihood(scorer([-9.0] * 8), "Hipsterhöhle", "The Hipster Rink", "de", "en")
    assert short.verdict == "unsure" and short.reason == "too short"
    messages, answer = asked[0]
    assert answer == SALAD and messages == translation_messages(SOURCE, "de", "en")
    assert messages[0]["content"] == f"Translate this German text into English:\n\n{SOURCE}"


def test_a_text_too_long_for_the_scorer_is_unsure_not_an_error() -> None:
    def too_long(messages: list[dict[str, str]], answer: str) -> list[float]:
        raise ValueError("3000 tokens do not fit the scorer's context of 2048")

    check = check_likelihood(too_long, SOURCE, GOOD, "de", "en")
    assert check.verdict == "unsure" and "2048" in (check.reason or "")
    assert check.to_dict()["verdict"] == "unsure" and check.to_dict()["mean"] is None


def test_only_backbones_that_can_score_a_text_have_a_scorer() -> None:
    lm, _ = fake_lm()
    assert scorer_of(lm) is None and scorer_of(None) is None
    scoring, engine = scoring_lm()
    score = scorer_of(scoring)
    assert score is not None and score([], "x") == [-1.0] * 12 and engine.scored == [([], "x")]


def test_word_salad_gets_the_lowest_level_without_an_llm_judgment() -> None:
    lm, engine = scoring_lm(low={SALAD})
    with dspy.context(lm=lm):
        salad = PointwiseJudge("literary")(
            instruction=SOURCE, response=SALAD, language="de", response_language="en"
        ).result
        assert engine.calls == [] and salad.ok and salad.score == 1
        assert salad.decided_by == {"argmax": "likelihood check", "probability": "likelihood check"}
        assert salad.details["likelihood_check"]["verdict"] == "implausible"
        assert salad.details["likelihood_check"]["mean"] == -7.0 and "implausible" in salad.feedback
        good = PointwiseJudge("literary")(
            instruction=SOURCE, response=GOOD, language="de", response_language="en"
        ).result
        # A plausible translation is judged as usual, and its record keeps the figures.
        assert good.score == 5 and engine.stage_calls("score")
        assert good.details["likelihood_check"] == {
            "verdict": "plausible",
            "mean": -1.0,
            "minimum": -1.0,
            "tokens": 12,
            "threshold": MEAN_FLOOR,
            "reason": None,
        }
        calls = len(engine.calls)
        off = PointwiseJudge("literary", likelihood_check=False)(
            instruction=SOURCE, response=SALAD, language="de", response_language="en"
        ).result
    assert off.score == 5 and len(engine.calls) > calls and "likelihood_check" not in off.details
    assert [answer for _, answer in engine.scored] == [SALAD, GOOD]  # the check was off for the third


def test_a_backbone_that_cannot_score_gets_the_llm_judgment_and_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    lm, engine = fake_lm()
    with dspy.context(lm=lm), caplog.at_level("WARNING", logger="cejudge_dspy"):
        for _ in range(2):
            result = PointwiseJudge("literary")(
                instruction=SOURCE, response=SALAD, language="de", response_language="en"
            ).result
            assert result.score == 5 and "likelihood_check" not in result.details
    said = [r for r in caplog.records if "likelihood check does not run" in r.getMessage()]
    assert len(said) == 1 and "fake/judge" in said[0].getMessage()


def test_the_language_check_decides_first_and_tasks_without_the_declaration_are_not_scored() -> None:
    french = "Chaque soir, le vieux pêcheur s'asseyait au port et regardait le soleil se coucher."
    lm, engine = scoring_lm(low={french})
    with dspy.context(lm=lm):
        result = PointwiseJudge("literary")(
            instruction=SOURCE, response=french, language="de", response_language="en"
        ).result
        assert result.decided_by["probability"] == "language check" and engine.scored == []
        # literary-paper extends literary but the paper ran no such check: the preset turns it off,
        # and a declaration without the key has none.
        assert load_task("literary").check_translation_likelihood
        assert not load_task("summeval").check_translation_likelihood


def test_the_declaration_key_leaves_the_prompts_fingerprint_as_it_was() -> None:
    from dataclasses import replace

    spec = load_task("literary")
    with_check = PointwiseJudge(spec)
    without = PointwiseJudge(replace(spec, check_translation_likelihood=False))
    assert prompt_fingerprint(with_check) == prompt_fingerprint(without)
