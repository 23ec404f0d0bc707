"""Verdicts from token probabilities: the decision token in both adapters, multi-token values, a missing
token, a backbone without logprobs, and the arithmetic on hand-computed numbers."""

from __future__ import annotations

import logging
import math

import dspy
import pytest

from cejudge_dspy.judges.cejudge import PairwiseJudge, PointwiseJudge
from cejudge_dspy.judges.checkeval._answers import p_yes_of
from cejudge_dspy.judges.verdicts import (
    JudgeResult,
    TokenChoice,
    confidence,
    debiased_preference,
    expected_score,
    mean_yes,
    read_field,
    tokens_from_logprobs,
    verdict_from_preference,
)
from cejudge_dspy.judges.verdicts._token_reading import value_starts
from cejudge_dspy.metrics._calibration import choose_tie_band, expected_calibration_error, reliability_table
from tests.support.fakes import fake_lm, scripted_logprobs


def toks(*spec: str | tuple[str, dict[str, float]]) -> list[TokenChoice]:
    """Tokens from plain strings (probability 1) or (token, {alternative: probability})."""
    out = []
    for s in spec:
        token, alts = (s, {s: 1.0}) if isinstance(s, str) else s
        top = tuple((t, math.log(p)) for t, p in alts.items())
        out.append(TokenChoice(token, math.log(alts.get(token, 1.0)), top))
    return out


def test_json_adapter_verdict_normalised_over_a_and_b() -> None:
    tokens = toks(
        '{"',
        "feedback",
        '":',
        ' "',
        "B is",
        '",',
        ' "',
        "verdict",
        '":',
        ' "',
        ("A", {"A": 0.6, "B": 0.3, "The": 0.1}),
        '"}',
    )
    reading = read_field(tokens, None, "verdict", ("A", "B"))
    assert reading.ok and reading.distribution == pytest.approx({"A": 2 / 3, "B": 1 / 3})
    assert reading.mass == pytest.approx(0.9)


def test_chat_adapter_verdict_after_the_field_marker() -> None:
    text = ["[[ ## feedback ## ]]", "\n", "the verdict is A", "\n\n", "[[ ## verdict ## ]]", "\n"]
    tokens = toks(*text, ("B", {"B": 0.7, "A": 0.2, " A": 0.1}), "\n\n", "[[ ## completed ## ]]")
    reading = read_field(tokens, None, "verdict", ("A", "B"))
    assert reading.distribution == pytest.approx({"A": 0.3, "B": 0.7})
    # `[[ ## verdict ## ]] = B`, as the small model writes it
    tokens = toks("[[ ## verdict ## ]]", " =", ("  B", {"  B": 0.5, "  A": 0.5}))
    assert read_field(tokens, None, "verdict", ("A", "B")).distribution == pytest.approx({"A": 0.5, "B": 0.5})


def test_leading_space_and_quote_inside_the_value_token_and_case() -> None:
    tokens = toks('{"verdict":', (' "a', {' "a': 0.5, ' "B': 0.25, '"b': 0.25}), '"}')
    assert read_field(tokens, None, "verdict", ("A", "B")).distribution == pytest.approx({"A": 0.5, "B": 0.5})


def test_multi_token_value_follows_the_generated_path() -> None:
    # Qwen writes numbers digit by digit: "10" is "1" then "0"; "1" alone ends at the next token.
    tokens = toks('{"score":', " ", ("1", {"1": 0.5, "9": 0.3, "2": 0.2}), ("0", {"0": 0.6, "}": 0.4}), "}")
    levels = [str(i) for i in range(1, 11)]
    dist = read_field(tokens, None, "score", levels).distribution
    assert dist["10"] == pytest.approx(0.3) and dist["1"] == pytest.approx(0.2)
    assert dist["9"] == pytest.approx(0.3) and dist["2"] == pytest.approx(0.2)
    # a word split in pieces: "y" can only become "yes"
    tokens = toks('{"a": "', ("y", {"y": 0.7, "no": 0.3}), "es", '"}')
    assert read_field(tokens, None, "a", ("yes", "no")).distribution == pytest.approx({"yes": 0.7, "no": 0.3})


def test_missing_field_or_no_allowed_value_says_why() -> None:
    tokens = toks('{"feedback": "fine"}')
    reading = read_field(tokens, None, "verdict", ("A", "B"))
    assert not reading.ok and "no 'verdict' field" in reading.reason
    tokens = toks('{"verdict": "', ("Both", {"Both": 0.9, "Neither": 0.1}), '"}')
    reading = read_field(tokens, None, "verdict", ("A", "B"))
    assert not reading.ok and "no allowed value" in reading.reason


def test_list_of_yes_no_answers() -> None:
    text = '{"answers": ["yes", "No, because it is short", "yes"]}'
    content = scripted_logprobs(
        text, {'["': {"yes": 0.8, "no": 0.2}, ', "': {"No": 0.6, "yes": 0.3, "Yes": 0.1}}
    )
    tokens = tokens_from_logprobs({"content": content})
    p_yes = p_yes_of(tokens, 4)
    assert p_yes[0] == pytest.approx(0.8)
    assert p_yes[1] == pytest.approx(0.4) and p_yes[2] == pytest.approx(0.4)  # "yes"+"Yes" = 0.4
    assert p_yes[3] is None  # a fourth question got no answer
    assert value_starts('{"answers": "yes"}', "answers", is_list=True) == "the 'answers' field is not a list"


def test_debiasing_arithmetic_by_hand() -> None:
    # A shown first: P(first better) 0.8; B shown first: P(first better) 0.6, so P(A better) there 0.4.
    p_a = debiased_preference(0.8, 0.6)
    assert p_a == pytest.approx(0.6)
    assert verdict_from_preference(p_a) == "A" and confidence(p_a) == pytest.approx(0.6)
    assert verdict_from_preference(p_a, tie_band=0.25) == "tie"  # |0.6 - 0.5| <= 0.125
    assert verdict_from_preference(0.3) == "B" and verdict_from_preference(0.5) == "tie"
    assert debiased_preference(0.7, None) == pytest.approx(0.7) and debiased_preference(None, None) is None
    assert expected_score({"1": 0.2, "2": 0.3, "3": 0.5}) == pytest.approx(2.3)
    assert mean_yes([0.9, None, 0.5]) == pytest.approx(0.7)


def test_calibration_by_hand() -> None:
    p_as, golds = [0.9, 0.8, 0.6, 0.3, None], ["A", "B", "A", "B", "A"]
    # confidences 0.9 right, 0.8 wrong, 0.6 right, 0.7 right (B): ECE = (0.4 + 0.3 + 0.8 + 0.1) / 4
    assert expected_calibration_error(p_as, golds) == pytest.approx(0.4)
    table = reliability_table(p_as, golds)
    assert [r["n"] for r in table] == [0, 1, 1, 1, 1]
    assert table[3]["accuracy"] == 0.0 and table[3]["confidence"] == pytest.approx(0.8)
    chosen = choose_tie_band([0.52, 0.9, 0.1], ["B", "A", "B"], candidates=(0.0, 0.1))
    # No gold tie: a band can only turn answers into (wrong) ties, so the narrowest wins the draw.
    assert chosen["tie_band"] == 0.0 and chosen["candidates"][1]["accuracy_with_ties"] == pytest.approx(2 / 3)


def verdict_probs(first: float):
    """Verdict answers whose A/B token has P(A) = `first` (the fake always says A)."""

    def logprobs(stage: str, inputs: dict[str, str], text: str):
        if stage != "verdict":
            return scripted_logprobs(text)
        return scripted_logprobs(text, {'"verdict": "': {"A": first, "B": 1 - first}})

    return logprobs


def test_pairwise_judge_debiases_over_both_orders() -> None:
    lm, engine = fake_lm()
    shown_first = {}

    def logprobs(stage, inputs, text):
        if stage != "verdict":
            return scripted_logprobs(text)
        # P(shown first better): 0.75 with A shown first, 0.6 with B shown first.
        p = 0.75 if inputs["response_a"] == "one" else 0.6
        shown_first[inputs["response_a"]] = p
        return scripted_logprobs(text, {'"verdict": "': {"A": p, "B": 1 - p}})

    engine.logprobs = logprobs
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = PairwiseJudge("chat", judgment="pairwise")(
            instruction="q", response_a="one", response_b="two"
        ).result
    assert set(engine.asked_logprobs) == {"verdict"}  # only the judgment asks
    assert result.argmax.verdict == "tie"  # both orders said "A": disagreeing orders
    assert [o.p_first for o in result.orders] == pytest.approx([0.75, 0.6])
    assert result.probabilities.p_a == pytest.approx((0.75 + 0.4) / 2)
    assert result.verdict == "A" and result.decision == "probability"
    assert result.under("argmax").verdict == "tie"
    back = JudgeResult.from_dict(result.to_dict())
    assert back.probabilities == result.probabilities and back.argmax == result.argmax
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        argmax = PairwiseJudge("chat", decision="argmax", judgment="pairwise")(
            instruction="q", response_a="one", response_b="two"
        )
    assert argmax.result.verdict == "tie" and argmax.result.under("probability").verdict == "A"


def test_pointwise_expected_score_beside_the_argmax() -> None:
    lm, engine = fake_lm()

    def logprobs(stage, inputs, text):
        at = {'"score":': {" 5": 0.5, " 4": 0.25, " 6": 0.25}} if stage == "score" else None
        return scripted_logprobs(text, at)

    engine.logprobs = logprobs
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = PointwiseJudge("literary")(
            instruction="Der Hund.", response="The dog.", language="de"
        ).result
    assert result.argmax.score == 5 and result.score == pytest.approx(5.0)
    assert result.probabilities.distribution["4"] == pytest.approx(0.25)


def test_backbone_without_logprobs_is_said_once_and_recorded(caplog: pytest.LogCaptureFixture) -> None:
    lm, _ = fake_lm()
    with caplog.at_level(logging.WARNING, logger="cejudge_dspy"), dspy.context(lm=lm):
        for _ in range(2):
            result = PairwiseJudge("chat")(instruction="q", response_a="x", response_b="y").result
    said = [r for r in caplog.records if "returns no token probabilities" in r.getMessage()]
    assert len(said) == 1
    assert result.probabilities.status == "unavailable" and result.decision == "argmax"
    assert (
        result.verdict == "tie"
        and [o.probability_error for o in result.orders]
        == ["the backbone returns no token probabilities"] * 2
    )


def test_backbone_that_refuses_logprobs_is_asked_once(caplog: pytest.LogCaptureFixture) -> None:
    lm, engine = fake_lm(refuse_logprobs=True)
    with caplog.at_level(logging.WARNING, logger="cejudge_dspy"), dspy.context(lm=lm):
        for _ in range(2):
            result = PairwiseJudge("chat", orders="single", judgment="pairwise")(
                instruction="q", response_a="x", response_b="y"
            ).result
    assert engine.asked_logprobs == ["verdict"]
    assert result.ok and result.probabilities.status == "unavailable"
    assert sum("returns no token probabilities" in r.getMessage() for r in caplog.records) == 1


def test_missing_decision_token_keeps_the_argmax_and_says_why() -> None:
    lm, engine = fake_lm()
    engine.logprobs = lambda stage, inputs, text: scripted_logprobs(text.replace("verdict", "verdikt"))
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = PairwiseJudge("chat")(instruction="q", response_a="x", response_b="y").result
    assert (
        result.probabilities.status == "not_located" and "no 'verdict' field" in result.probabilities.reason
    )
    assert result.decision == "argmax" and result.verdict == "tie"


def test_old_records_read_as_argmax() -> None:
    old = {
        "mode": "pairwise",
        "status": "ok",
        "verdict": "A",
        "orders": [{"order": "AB", "verdict": "A", "shown_verdict": "A"}],
    }
    result = JudgeResult.from_dict(old)
    assert result.decision == "argmax" and result.probabilities is None and result.orders[0].p_first is None
    assert result.under("probability").verdict == "A" and result.under("argmax").verdict == "A"


def test_a_notice_is_given_once_per_lm_and_never_keeps_the_lm_alive() -> None:
    import gc
    import weakref

    from cejudge_dspy.judges._machinery._said_once import FirstTime

    class LM:  # any hashable object stands for a backbone
        pass

    first = FirstTime()
    a, b = LM(), LM()
    assert [first(a), first(a), first(b), first(a)] == [True, False, True, False]
    gone = weakref.ref(a)
    del a
    gc.collect()
    assert gone() is None  # the notice's memory does not hold the LM (or its model)
