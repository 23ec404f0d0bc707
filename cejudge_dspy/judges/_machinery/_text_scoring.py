"""Scoring a given text with the current backbone: the log probability of each token of a text as its own
answer, which the likelihood judge, CE-Judge's likelihood tie-breaker and its translation likelihood check
read. Local GGUF models can, and so can a server that forces an answer with a grammar and reports the model's
own token log probabilities (llama.cpp's, `backbones.text_scorer`); a backbone that cannot (a hosted API, the
simulated one, a test's fake) has no scorer, which the judges say once per backbone."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import dspy

from cejudge_dspy.backbones import text_scorer
from cejudge_dspy.judges._machinery._said_once import FirstTime

logger = logging.getLogger("cejudge_dspy")

# `(messages, answer) -> log probabilities` of the answer's tokens and of the token that ends its turn.
Scorer = Callable[[list[dict[str, str]], str], list[float]]


def scorer_of(lm: Any) -> Scorer | None:
    """The LM's way to score a given answer, or None for backbones that cannot (hosted APIs, fakes):
    a local engine's, or a server's that scores a forced answer faithfully (`backbones.text_scorer`)."""
    return text_scorer(lm)


def current_scorer(seen: FirstTime, consequence: str) -> Scorer | None:
    """The current backbone's way to score a given text (`scorer_of`), or None; when it has none, say once
    per backbone (per `seen`: one per feature) what that means: `consequence`, a clause."""
    score = scorer_of(lm := dspy.settings.lm)
    if score is None and lm is not None and seen(lm):
        logger.warning(
            "backbone %s cannot score a given text, so %s",
            getattr(lm, "model", type(lm).__name__),
            consequence,
        )
    return score
