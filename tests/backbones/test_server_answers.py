"""What an HTTP backbone's answers must be before the judges read them (issue #49): log probabilities finite
and at most 0, answers whole (not cut at the token budget), calls bounded in time, and error reasons one line.
Against the hostile fake server (tests/support/hostile/server.py) on 127.0.0.1; the CLI cases are in
tests/test_hostile.py.
"""

from __future__ import annotations

import asyncio
import math

import pytest

from cejudge_dspy.backbones import (
    AnswerCutShort,
    CallTimedOut,
    EmptyAnswer,
    checked_logprob,
    error_line,
    logprob_problem,
    logprobs_problem,
    make_lm,
    whole_answers,
)
from cejudge_dspy.errors import BackboneError, InputError
from cejudge_dspy.judges import DirectPairwiseJudge
from cejudge_dspy.judges.verdicts import tokens_from_logprobs
from tests.support.hostile.server import MODEL, HostileServer


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (math.nan, "not finite"),
        (math.inf, "not finite"),
        (-math.inf, "not finite"),
        (5.0, "above 0"),
        (1e-9, "above 0"),
        ("-1", "not a number"),
        (True, "not a number"),
        (None, "not a number"),
    ],
)
def test_what_is_no_log_probability(value: object, why: str) -> None:
    assert why in (logprob_problem(value) or "")
    with pytest.raises(ValueError, match=why):
        checked_logprob(value, "here")


@pytest.mark.parametrize("value", [0.0, -0.0, -1e-12, -3.5, -1000])
def test_log_probabilities_pass(value: float) -> None:
    assert logprob_problem(value) is None and checked_logprob(value, "here") == value


def test_an_impossible_alternative_names_its_token_and_no_reading_is_made() -> None:
    content = {
        "content": [
            {"token": "A", "logprob": -0.1, "top_logprobs": [{"token": "A", "logprob": -0.1}]},
            {"token": "B", "logprob": -0.2, "top_logprobs": [{"token": "C", "logprob": math.nan}]},
        ]
    }
    assert logprobs_problem(content) == "a log probability of nan is not finite, at the token 'B'"
    with pytest.raises(ValueError, match="not finite"):
        tokens_from_logprobs(content)
    assert logprobs_problem({"content": content["content"][:1]}) is None


def test_a_cut_answer_raises_even_when_it_comes_from_the_cache() -> None:
    """finish_reason "length" is kept in DSPy's cache, so a cached cut answer is caught again."""
    with HostileServer("length") as server:
        lm = make_lm(MODEL, api_base=server.api_base, api_key="k", cache=True)
        for _ in range(2):
            with whole_answers(), pytest.raises(AnswerCutShort, match="finish_reason: length") as caught:
                lm("Say something long.")
            assert caught.value.text
        assert server.requests == 1  # the second came from the cache, and was still refused
        # Outside the judges' stages (a reflection model's proposal) the cut answer is returned as it is.
        assert lm("Say something long.") == [caught.value.text]


def test_a_python_judgment_of_a_cut_answer_is_unparsed_with_the_reason() -> None:
    with HostileServer("length") as server:
        lm = make_lm(MODEL, api_base=server.api_base, api_key="k", cache=False)
        import dspy

        with dspy.context(lm=lm):
            result = DirectPairwiseJudge("chat")(
                instruction="Name a prime.", response_a="9", response_b="7", language="en"
            ).result
    assert result.status == "unparsed" and result.verdict is None
    assert "finish_reason: length" in str(result.to_dict()), result


def test_no_choices_is_a_server_error() -> None:
    with HostileServer("no-choices") as server:
        lm = make_lm(MODEL, api_base=server.api_base, api_key="k", cache=False)
        with pytest.raises(EmptyAnswer, match="no choices"):
            lm("hello")


def test_a_stalled_call_ends_at_its_timeout_retries_included() -> None:
    """The server holds the request (`arrived` says it did); the call ends with CallTimedOut, not after the
    client's 600 s and three retries."""
    with HostileServer("stall") as server:
        lm = make_lm(MODEL, api_base=server.api_base, api_key="k", cache=False, timeout=1, num_retries=3)

        async def call() -> None:
            await lm.acall("hello")

        with pytest.raises(CallTimedOut, match="within the timeout of 1 s"):
            asyncio.run(call())
        assert server.arrived.is_set()


@pytest.mark.parametrize("timeout", [0, -1, math.nan, math.inf, 3601, True, "5"])
def test_make_lm_refuses_a_timeout_out_of_range(timeout: object) -> None:
    with pytest.raises(
        InputError, match=r"^timeout: must be (at least 1|at most 3600|a finite number|a number)"
    ):
        make_lm(MODEL, api_base="http://127.0.0.1:9/v1", timeout=timeout)  # type: ignore[arg-type]


def test_an_api_key_on_the_simulated_backbone_is_refused() -> None:
    with pytest.raises(BackboneError, match="--api-key applies to HTTP backbones only"):
        make_lm("simulated:0", api_key="sk-x")


def test_error_lines_drop_the_traceback_a_client_wrapped_into_its_message() -> None:
    text = (
        "litellm.InternalServerError: OpenAIException - Invalid response object Traceback (most recent "
        'call last):\n  File "/x/convert.py", line 827, in convert\n    tool_calls = choice["message"]\n'
        "                 ~~~~~~^^^^^^^^^^^\nKeyError: 'message'\n"
    )
    line = error_line(RuntimeError(text))
    assert line == "litellm.InternalServerError: OpenAIException - Invalid response object", line
    assert error_line(ValueError("")) == "ValueError"
    assert len(error_line("x" * 2000)) == 500 and error_line("x" * 2000, limit=None) == "x" * 2000


def test_the_flag_has_the_backbones_default_and_range() -> None:
    from cejudge_dspy.backbones import DEFAULT_TIMEOUT_S, TIMEOUT_RANGE, BackboneOptions
    from cejudge_dspy.cli._app import build_parser

    timeout = dict(BackboneOptions.options())["timeout"]
    assert BackboneOptions().timeout == DEFAULT_TIMEOUT_S and (timeout.low, timeout.high) == TIMEOUT_RANGE
    evaluate = build_parser()._subparsers._group_actions[0].choices["evaluate"]  # type: ignore[union-attr]
    assert "from 1 to 3600" not in evaluate.format_help()
    assert "1 to 3600 (default 300)" in " ".join(evaluate.format_help().split())
