"""Checks that give a pointwise translation the scale's lowest level without an LLM judgment.

Both catch what the embedded 1.5B judge cannot see (docs/measurements/embedded-obvious-items.md), each
only where it is sure, and each leaves its figures in the record:
- the response language (_language_check.py): a translation into another language, or the source copied;
- the backbone's own likelihood of the translation given its source (_likelihood_check.py): word salad.
The language check runs first: it needs no model, and a copied source is likely to any backbone.
"""

from __future__ import annotations

import asyncio
from typing import Any

from cejudge_dspy.judges._machinery._said_once import FirstTime
from cejudge_dspy.judges._machinery._text_scoring import current_scorer
from cejudge_dspy.judges.cejudge._language_check import check_language
from cejudge_dspy.judges.cejudge._likelihood_check import check_likelihood
from cejudge_dspy.judges.verdicts import CHECK_NAMES, JudgeResult
from cejudge_dspy.tasks import TaskSpec
from cejudge_dspy.usage import Usage

LANGUAGE_CHECK, LIKELIHOOD_CHECK = CHECK_NAMES  # what a record's `decided_by` says (verdicts)
_first_notice = FirstTime()  # LMs already reported as unable to score a text


def lowest_level(
    spec: TaskSpec, reason: str, check: str, details: dict[str, Any], usage: Usage
) -> JudgeResult:
    """The scale's lowest level, decided by `check` for `reason` (a clause), with its figures."""
    lowest = min(spec.scale)
    return JudgeResult(
        mode="pointwise",
        status="ok",
        score=lowest,
        feedback=f"{reason[0].upper()}{reason[1:]}: level {lowest}.",
        usage=usage,
        details=details,
        decided_by={"argmax": check, "probability": check},
    )


async def translation_checks(
    spec: TaskSpec,
    *,
    instruction: str,
    response: str,
    language: str,
    response_language: str,
    usage: Usage,
    language_check: bool = True,
    likelihood_check: bool = True,
) -> tuple[JudgeResult | None, dict[str, Any]]:
    """(the lowest-level result when a check decides, else None; the checks' figures to record)."""
    details: dict[str, Any] = {}
    if language_check and spec.check_response_language:
        found = check_language(response, response_language)
        if found.verdict == "no":
            details["language_check"] = found.to_dict()
            return lowest_level(spec, found.describe(), LANGUAGE_CHECK, details, usage), details
    score = None
    if likelihood_check and spec.check_translation_likelihood:
        score = current_scorer(
            _first_notice,
            "the translation-likelihood check does not run: word salad is left to the LLM judgment (the "
            "check needs a local GGUF backbone or a server that scores a given text)",
        )
    if score is not None:
        # A forward pass on the CPU: off the event loop, so other items' calls are not held up.
        check = await asyncio.to_thread(
            check_likelihood, score, instruction, response, language, response_language
        )
        details["likelihood_check"] = check.to_dict()
        if check.verdict == "implausible":
            return lowest_level(spec, check.describe(), LIKELIHOOD_CHECK, details, usage), details
    return None, details
