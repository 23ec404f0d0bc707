"""Token probabilities in the judges: ask the backbone for them, notice once when it cannot give them,
and turn a judgment call's tokens into the `Probabilities` of a record.

A judgment stage (`Stage.probabilities = True`) asks for the top-k logprobs of every generated token.
Whether a backbone gives them is learnt on its first judgment call and kept with its capabilities
(`backbones.learn_logprobs`, read back through `backbones.capabilities`): a backbone that refuses the option
(an error naming logprobs) is not asked again, and one that refuses it or answers without them is said once
on the `cejudge_dspy` logger; its records say `probabilities: unavailable`.
The arithmetic is in `cejudge_dspy.judges.verdicts._probabilities`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import dspy

from cejudge_dspy.backbones import capabilities, learn_logprobs
from cejudge_dspy.errors import BackboneError
from cejudge_dspy.judges._machinery._said_once import FirstTime
from cejudge_dspy.judges._option_choices import checked
from cejudge_dspy.judges.verdicts import (
    DEFAULT_TIE_BAND,
    IMPOSSIBLE,
    TOP_LOGPROBS,
    UNAVAILABLE,
    Decision,
    OrderResult,
    Probabilities,
    TokenChoice,
    confidence,
    debiased_preference,
    expected_score,
    is_unavailable,
    read_field,
    tokens_from_logprobs,
    verdict_from_preference,
)

logger = logging.getLogger("cejudge_dspy")
_first_notice = FirstTime()  # told the user it gives none
_impossible_notice = FirstTime()  # told the user it gave impossible ones


def asks_probabilities(lm: Any) -> bool:
    """Whether to ask `lm` for logprobs: yes unless it refused the option. One that answers without
    them is still asked, so its requests (and DSPy's cache keys) stay the same from run to run."""
    return lm is not None and not capabilities(lm).refuses_logprobs


def logprob_config() -> dict[str, Any]:
    return {"logprobs": True, "top_logprobs": TOP_LOGPROBS}


def refuses_logprobs(exc: BaseException) -> bool:
    """An error that says the backbone does not take the logprobs option (not any other failure)."""
    feature = getattr(exc, "feature", None)
    text = str(exc).lower()
    return feature in ("logprobs", "probabilities") or ("logprob" in text and "support" in text)


def mark_unavailable(lm: Any, why: str, *, refused: bool = False) -> None:
    """Remember that `lm` gives no probabilities, and say so once; a BackboneError instead where the user
    asked for them (`--require-logprobs`: `capabilities(lm).require_logprobs`), so nothing falls back to
    the argmax."""
    name = getattr(lm, "model", type(lm).__name__)
    if capabilities(lm).require_logprobs:
        raise BackboneError(
            f"backbone {name} returns no token probabilities ({why}) and --require-logprobs is set; "
            "serve the model where the chat endpoint returns logprobs with top_logprobs (see "
            "docs/how-to/serve-a-judge-model.md), or drop --require-logprobs to use the argmax answers"
        )
    if refused:
        learn_logprobs(lm, "refused")
    if _first_notice(lm):
        logger.warning(
            "backbone %s returns no token probabilities (%s): verdicts and scores use the argmax answer, "
            "and records say probabilities: unavailable",
            name,
            why,
        )


def tokens_of(lm: Any, pred: dspy.Prediction) -> list[TokenChoice] | None:
    """The generated tokens with their alternatives, or None when the backbone gave none (said once) or gave
    impossible ones: then `pred.tokens_why` says which (IMPOSSIBLE, said once per backbone too), and every
    reading of this answer is unavailable with that reason (`unavailable_reason`)."""
    try:
        tokens = tokens_from_logprobs(getattr(pred, "logprobs", None))
    except ValueError as exc:
        pred.tokens_why = f"{IMPOSSIBLE} ({exc})"
        if _impossible_notice(lm):
            name = getattr(lm, "model", type(lm).__name__)
            logger.warning(
                "backbone %s %s: such answers are read by their argmax answer", name, pred.tokens_why
            )
        return None
    if tokens and any(t.top for t in tokens):
        learn_logprobs(lm, "gave")
        return tokens
    # A backbone that gave probabilities once is not written off for one odd answer.
    if not capabilities(lm).logprobs:
        mark_unavailable(lm, "no logprobs in its answer" if not tokens else "no alternatives per token")
    return None


def check_decision(decision: str) -> Decision:
    return checked("decision", decision)


def check_tie_band(tie_band: float) -> float:
    return float(checked("tie_band", tie_band))


def unavailable_reason(pred: Any) -> str:
    """Why a judgment's prediction has no tokens to read: UNAVAILABLE, or the impossible value it had."""
    return str(getattr(pred, "tokens_why", None) or UNAVAILABLE)


# --- records --------------------------------------------------------------------------------------


def order_reading(pred: dspy.Prediction) -> tuple[float | None, str | None]:
    """(P(the response shown first is better), why not) from a verdict stage's prediction."""
    tokens = getattr(pred, "tokens", None)
    if tokens is None:
        return None, unavailable_reason(pred)
    reading = read_field(tokens, None, "verdict", ("A", "B"))
    if not reading.ok:
        return None, reading.reason
    return reading.distribution["A"], None


def pairwise_probabilities(
    orders: Sequence[OrderResult], tie_band: float = DEFAULT_TIE_BAND
) -> Probabilities:
    """p(A) averaged over the orders (the swapped one mapped back), its verdict and confidence."""
    missing = [o for o in orders if o.p_first is None]
    if not orders:
        return Probabilities(status="unavailable", reason=UNAVAILABLE)
    if gone := [o.probability_error for o in orders if is_unavailable(o.probability_error)]:
        return Probabilities(status="unavailable", reason=gone[0])
    if missing:
        reason = "; ".join(f"order {o.order}: {o.probability_error}" for o in missing)
        return Probabilities(status="not_located", reason=reason)
    by_order = {o.order: o.p_first for o in orders}
    p_a = debiased_preference(by_order.get("AB"), by_order.get("BA"))
    assert p_a is not None  # every order has p_first here
    return preference_probabilities(p_a, tie_band)


def preference_probabilities(p_a: float, tie_band: float) -> Probabilities:
    """A record's probabilities from p(A), wherever it came from (the orders, or the two grades)."""
    return Probabilities(
        status="ok",
        p_a=p_a,
        confidence=confidence(p_a),
        tie_band=tie_band,
        verdict=verdict_from_preference(p_a, tie_band),
    )


def score_probabilities(pred: dspy.Prediction, levels: Sequence[int]) -> Probabilities:
    """The distribution over the scale's levels at the score token, and the expected score."""
    tokens = getattr(pred, "tokens", None)
    if tokens is None:
        return Probabilities(status="unavailable", reason=unavailable_reason(pred))
    reading = read_field(tokens, None, "score", [str(level) for level in levels])
    if not reading.ok:
        return Probabilities(status="not_located", reason=reading.reason)
    return Probabilities(
        status="ok", distribution=reading.distribution, score=expected_score(reading.distribution)
    )
