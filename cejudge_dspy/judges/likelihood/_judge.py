"""The likelihood judge, `--method likelihood`: which response would the backbone itself more likely have
given? Two forward passes, nothing generated, no judgment asked.

Each response is scored as the backbone's own answer to the instruction (one user turn, as a user asked
it; the backbone's scorer, the same scoring CE-Judge's likelihood tie-breaker uses), and

  mean_x = the mean token log probability of response x (with the token that ends its turn)
  p(A)   = sigmoid(mean_a - mean_b) = exp(mean_a) / (exp(mean_a) + exp(mean_b))

the per-token Bradley-Terry preference between the two geometric-mean token probabilities. Per token, so a
long response is not penalised for its length; nothing to tune. The argmax verdict is the response with the
higher mean (a tie only when the means are equal, e.g. the same text twice); under `--decision probability`
(the default) `--tie-band` applies to p(A) as for every pairwise judge. It is the CE-Judge tie-breaker's
rule (judges/cejudge/_tiebreak.py) applied to every pair, so `cejudge evaluate --method likelihood` beside
`--method cejudge` measures what the other stages add.

It is a preference, not a judgment: it reads neither the task's criteria nor its rubric, a fluent refusal can
be more likely than an answer, and on open-ended tasks it favours the plainer text. A record keeps the
figures it decided on: `details["likelihood"]` holds both means, their token counts and p(A).

Pairwise tasks only. A pointwise task is refused: a mean token log probability is a property of the text
under the model (its length, language and style move it as much as its quality), and no principled map
takes it to a task's score levels without fitting one on labelled data. The pointwise use that holds, the
word-salad floor of the translation likelihood check, is CE-Judge's (judges/cejudge/_likelihood_check.py).

Cost, as `Usage` records it: `calls` 2 (the two scoring passes, stage `likelihood`), `prompt_tokens` the
tokens scored (both responses with their end of turn: the instruction's tokens are read as well, but the
scorer does not report them), `completion_tokens` 0. A response's figures depend on its instruction alone,
never on the response it is compared with, so the program scores each (instruction, response) once and
every other pair it enters reuses them (`reused`, not `calls`): ranking N systems on a prompt costs N
scoring passes, not N(N-1). It needs a backbone that can score a given text
(`backbones.text_scorer`): a local GGUF model (`embedded`, `gguf:PATH`), or a server at `--api-base` whose
probe shows it scores a forced answer faithfully (llama.cpp's). On any other the judge raises a
BackboneError naming it (a run stops at its first item); `cejudge judge` and `evaluate` refuse the
simulated backbone and hosted APIs from the spec alone, before anything is written
(`check_method_backbone`).
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

import dspy

from cejudge_dspy.data import normalize_language, require_text
from cejudge_dspy.errors import BackboneError, TaskError
from cejudge_dspy.judges._machinery._probability_readings import (
    check_decision,
    check_tie_band,
    preference_probabilities,
)
from cejudge_dspy.judges._machinery._shared_work import SharedWork
from cejudge_dspy.judges._machinery._sync_bridge import run_sync
from cejudge_dspy.judges._machinery._text_scoring import Scorer, scorer_of
from cejudge_dspy.judges.verdicts import DEFAULT_TIE_BAND, Decision, JudgeResult, decide, unparsed
from cejudge_dspy.tasks import TaskSpec, load_task
from cejudge_dspy.usage import Usage, collecting, record_call

METHOD = "likelihood"
STAGE = "likelihood"
# What a backbone must be to score a given text (backbones.text_scorer); the refusals name it.
SCORING_BACKBONES = (
    "a local GGUF model, embedded or gguf:PATH, or a server at --api-base that scores a forced answer, "
    "as llama.cpp's does"
)


@dataclass(frozen=True)
class PairLikelihood:
    """Both responses' mean token log probabilities as the backbone's answers, their token counts and p(A)."""

    mean_a: float
    mean_b: float
    tokens_a: int
    tokens_b: int
    p_a: float

    @property
    def argmax(self) -> Literal["A", "B", "tie"]:
        """The more likely response; a tie only on equal means (read from the unrounded p(A))."""
        if self.p_a == 0.5:
            return "tie"
        return "A" if self.p_a > 0.5 else "B"

    def describe(self) -> str:
        """One sentence for a record's feedback."""
        if self.argmax == "tie":
            return f"As its own answer the backbone finds both responses equally likely ({self._means()})."
        return f"As its own answer the backbone finds response {self.argmax} more likely ({self._means()})."

    def _means(self) -> str:
        return f"mean token log probability A {self.mean_a:.2f}, B {self.mean_b:.2f}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def pair_p_a(mean_a: float, mean_b: float) -> float:
    """p(A) = sigmoid(mean_a - mean_b), computed without overflow for any gap."""
    gap = mean_a - mean_b
    if gap >= 0:
        return 1.0 / (1.0 + math.exp(-gap))
    return math.exp(gap) / (1.0 + math.exp(gap))


def pair_likelihood(logprobs_a: list[float], logprobs_b: list[float]) -> PairLikelihood:
    """The preference from each response's token log probabilities (neither empty)."""
    mean_a, mean_b = sum(logprobs_a) / len(logprobs_a), sum(logprobs_b) / len(logprobs_b)
    return PairLikelihood(
        round(mean_a, 4), round(mean_b, 4), len(logprobs_a), len(logprobs_b), pair_p_a(mean_a, mean_b)
    )


def current_scorer_or_refuse() -> Scorer:
    """The current backbone's scorer; a BackboneError naming the backbone when it has none (a run stops:
    every item would fail the same way)."""
    lm = dspy.settings.lm
    score = scorer_of(lm)
    if score is None:
        name = "none is configured" if lm is None else f"{getattr(lm, 'model', type(lm).__name__)} cannot"
        raise BackboneError(
            f"--method likelihood needs a backbone that can score a given text ({SCORING_BACKBONES}); {name}"
        )
    return score


class LikelihoodPairwiseJudge(dspy.Module):
    """p(A) from the backbone's likelihood of each response as its own answer (see the module docstring)."""

    def __init__(
        self,
        task: str | TaskSpec = "chat",
        decision: Decision = "probability",
        tie_band: float = DEFAULT_TIE_BAND,
    ) -> None:
        super().__init__()
        self.spec = load_task(task)
        if self.spec.mode != "pairwise":
            raise TaskError(
                f"task '{self.spec.name}' is {self.spec.mode}; --method likelihood compares two responses "
                "(pairwise tasks only): a text's own likelihood has no principled mapping to a score scale"
            )
        self.decision = check_decision(decision)
        self.tie_band = check_tie_band(tie_band)
        self.shared = SharedWork()  # each response scored once per instruction and backbone

    async def aforward(
        self, instruction: str, response_a: str, response_b: str, language: str = "en"
    ) -> dspy.Prediction:
        instruction = require_text(instruction, "instruction")
        a, b = require_text(response_a, "response_a"), require_text(response_b, "response_b")
        normalize_language(language)
        score = current_scorer_or_refuse()
        messages = [{"role": "user", "content": instruction}]
        usage = Usage()
        tokens = [0]  # scored by this item's own passes (a reused result's were counted where it was made)

        async def scored_once(text: str) -> list[float]:
            async def compute() -> list[float]:
                figures = await _score(score, messages, text)
                tokens[0] += len(figures)
                return figures

            return await self.shared.get(STAGE, self, {"instruction": instruction, "response": text}, compute)

        with collecting(usage, expected_calls=2):
            # Both in flight at once: a server with several slots reads the two texts side by side.
            scored = await record_call(
                STAGE,
                asyncio.gather(*(scored_once(text) for text in (a, b)), return_exceptions=True),
                label="likelihood of each response",
            )
        # record_call counts DSPy's LM calls; a scoring pass is none of them, and a reused one is no call.
        fresh = 2 - usage.reused
        usage.calls += fresh
        if fresh:
            usage.by_stage[STAGE] = fresh
        usage.prompt_tokens += tokens[0]
        failure = _failure(scored)
        if failure is not None:
            return unparsed("pairwise", STAGE, failure, method=METHOD, usage=usage).to_prediction()
        pair = pair_likelihood(*scored)
        result = JudgeResult(
            mode="pairwise",
            status="ok",
            method=METHOD,
            verdict=pair.argmax,
            feedback=pair.describe(),
            usage=usage,
            details={"likelihood": pair.to_dict()},
            probabilities=preference_probabilities(pair.p_a, self.tie_band),
        )
        return decide(result, self.decision).to_prediction()

    def forward(self, **kwargs: Any) -> dspy.Prediction:
        return run_sync(self.aforward(**kwargs))


async def _score(score: Scorer, messages: list[dict[str, str]], text: str) -> list[float]:
    # A forward pass on the CPU: off the event loop, so other items' calls are not held up.
    return await asyncio.to_thread(score, messages, text)


def _failure(scored: list[Any]) -> str | None:
    """Why the pair has no preference: a response too long for the scorer's context (ValueError) or one
    with no token to score; None when both were scored. Any other exception is a fault and propagates."""
    for name, value in zip("AB", scored, strict=True):
        if isinstance(value, ValueError):
            return f"response {name} could not be scored: {value}"
        if isinstance(value, BaseException):
            raise value
        if not value:
            return f"response {name} has no tokens to score"
    return None


def likelihood_program(
    spec: TaskSpec, decision: Decision = "probability", tie_band: float = DEFAULT_TIE_BAND
) -> dspy.Module:
    """The `likelihood` method: the backbone's likelihood of each response, no judgment call."""
    return LikelihoodPairwiseJudge(spec, decision=decision, tie_band=tie_band)
