"""Ask a backbone what it gives the judges, before a run: `cejudge backbones check`.

Three features decide how a judgment is made (the judges record what a run actually had):

* `logprobs`: one short chat call asking for `logprobs` with `top_logprobs`; the judges read their verdict
  and grade probabilities from them, and without them fall back to the argmax answer;
* `scoring`: whether the backbone scores a given text as its own answer (`_capabilities.text_scorer`: a server
  that forces an answer with a grammar, as llama.cpp's does); the likelihood tie-breaker and the
  translation likelihood check need it, and without it leave close pairs to the grades alone;
* `schema`: whether DSPy sends the backbone a JSON schema for structured output
  (`lm.supports_response_schema`, DSPy's own reading of the model string); without it the adapters
  describe the format in the prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cejudge_dspy.backbones._capabilities import capabilities, text_scorer
from cejudge_dspy.backbones._http_scoring import ServerScorer
from cejudge_dspy.backbones._logprobs import logprobs_problem
from cejudge_dspy.backbones._server_lm import AnswerCutShort

QUESTION = "Is Paris the capital of France? Answer with one word: yes or no."
TOP = 5


@dataclass(frozen=True)
class FeatureCheck:
    """One feature: whether the backbone has it, and the evidence in a few words."""

    name: str
    available: bool
    detail: str


def check_features(lm: Any) -> list[FeatureCheck]:
    """Ask `lm` one question (and, for a server, the scoring probe); exceptions from the first call (an
    unreachable server, a rejected key) propagate for the caller to explain."""
    return [_logprobs(lm), _scoring(lm), _schema(lm)]


def _logprobs(lm: Any) -> FeatureCheck:
    try:
        outputs = lm(QUESTION, logprobs=True, top_logprobs=TOP, max_tokens=4)
    except AnswerCutShort as exc:  # four tokens may not end the answer; its log probabilities still count
        outputs = exc.outputs
    except Exception as exc:
        if "logprob" not in str(exc).lower():
            raise
        return FeatureCheck(
            "logprobs", False, f"the logprobs option was refused: {' '.join(str(exc).split())[:120]}"
        )
    first = outputs[0] if outputs else None
    logprobs = first.get("logprobs") if isinstance(first, dict) else None
    content = _get(logprobs, "content") or []
    alternatives = [len(_get(entry, "top_logprobs") or []) for entry in content]
    if not content:
        return FeatureCheck("logprobs", False, "answered without token log probabilities")
    if why := logprobs_problem(logprobs):  # NaN, infinite or above 0: the judges read none of them
        return FeatureCheck("logprobs", False, f"impossible values: {why}")
    if not any(alternatives):
        return FeatureCheck("logprobs", False, f"{len(content)} tokens, but no alternatives (top_logprobs)")
    return FeatureCheck(
        "logprobs", True, f"{len(content)} tokens with up to {max(alternatives)} alternatives each"
    )


def _scoring(lm: Any) -> FeatureCheck:
    server = capabilities(lm).scorer
    if server is not None and not isinstance(server, ServerScorer):
        return FeatureCheck("scoring", True, "the engine scores a given text itself")
    if server is None:
        return FeatureCheck("scoring", False, "not asked: only a server at --api-base is probed")
    if text_scorer(lm) is None:
        return FeatureCheck("scoring", False, server.probe() or "the probe failed")
    return FeatureCheck(
        "scoring", True, "a grammar-forced answer with the model's own token log probabilities"
    )


def _schema(lm: Any) -> FeatureCheck:
    if capabilities(lm).schema:
        return FeatureCheck("schema", True, "DSPy sends a JSON schema with structured calls")
    if bool(getattr(lm, "takes_response_schema", False)):  # llama.cpp's server, not asked to constrain
        return FeatureCheck(
            "schema",
            True,
            "the server takes a JSON schema as a grammar; the judges send it with --constrained",
        )
    return FeatureCheck(
        "schema", False, "DSPy sends no schema for this model string; the prompt states the format"
    )


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)
