"""What decides a pair whose two grades do not separate it: the backbone's own likelihood, or the orders.

On the embedded 1.5B backbone the graded judgment calls both responses of many obvious pairs "partly"
and separates them by a few hundredths of an expected grade (docs/measurements/embedded-obvious-items.md:
21 of 60 pairs within 0.05 of p(A) = 0.5, and every verdict that changed between two engines or
two runs was among them). Such a pair is decided by the last bits of a decode, not by the judge. The same
model, asked how likely each response is as *its own answer* to the instruction (the backbone's scorer:
on llama.cpp's server the text forced token by token, `backbones._http_scoring`), tells "15" from "16" for
"8 + 7" at once. So within `grade_margin` of each other the grades leave the pair to a tie-breaker:

- `likelihood` (default): p(A) = sigmoid(mean token log probability of A - that of B), the two texts
  scored as answers to the instruction (with the end of their turn). Per token, so a long answer is not
  penalised for its length; no parameter to tune. A response longer than the scorer's context, or a
  backbone that cannot score a given text (a hosted API; llama.cpp's server can), leaves the pair to the
  grades alone (any difference decides, as with margin 0), and the record says why.
- `orders`: CE-Judge's pairwise judgment in both orders (the design before the likelihood; measured
  worse than the grades alone on the obvious pairs).

The likelihood is a preference, not a judgment: a fluent refusal can be more likely than an answer, and
on long open-ended tasks it favours the plainer text. That is why it only breaks ties.
"""

from __future__ import annotations

import asyncio
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

from cejudge_dspy.judges._machinery._said_once import FirstTime
from cejudge_dspy.judges._machinery._text_scoring import Scorer, current_scorer
from cejudge_dspy.judges._option_choices import DEFAULT_TIE_BREAKER, TIE_BREAKERS, TieBreaker  # noqa: F401 - the face's

_first_notice = FirstTime()  # LMs already reported as unable to score a text


@dataclass(frozen=True)
class LikelihoodPreference:
    """Each response's mean token log probability as the backbone's answer to the instruction, and the
    p(A) they give; `p_a` None (with `reason`) when a response could not be scored."""

    mean_a: float | None = None
    mean_b: float | None = None
    tokens_a: int = 0
    tokens_b: int = 0
    p_a: float | None = None
    reason: str | None = None

    @property
    def verdict(self) -> Literal["A", "B"] | None:
        """The more likely response (A on an exact tie of means, which a float comparison makes rare)."""
        return None if self.p_a is None else ("A" if self.p_a >= 0.5 else "B")

    def describe(self) -> str:
        """One sentence for a record's feedback."""
        if self.p_a is None:
            return f"The likelihood tie-breaker could not decide ({self.reason}); the grades alone decided."
        return (
            f"The grades left the pair open; as its own answer the backbone finds response {self.verdict} "
            f"more likely (mean token log probability A {self.mean_a:.2f}, B {self.mean_b:.2f})."
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "tokens_a": self.tokens_a,
            "tokens_b": self.tokens_b,
            "p_a": self.p_a,
            "reason": self.reason,
        }


def likelihood_p_a(mean_a: float, mean_b: float) -> float:
    """p(A) from two mean token log probabilities: the per-token Bradley-Terry preference,
    exp(mean_a) / (exp(mean_a) + exp(mean_b)) = sigmoid(mean_a - mean_b)."""
    return 1.0 / (1.0 + math.exp(mean_b - mean_a))


def likelihood_preference(
    score: Scorer, instruction: str, response_a: str, response_b: str
) -> LikelihoodPreference:
    """Both responses scored by `score` as answers to `instruction` (one user turn, as a user asked it)."""
    messages = [{"role": "user", "content": instruction}]
    # Both at once: a server with more than one slot scores them side by side (with one slot, as by default,
    # they queue, and the second starts from the instruction's prefix the first left in the slot).
    with ThreadPoolExecutor(max_workers=2) as pool:
        pending = {
            name: pool.submit(score, messages, text) for name, text in (("a", response_a), ("b", response_b))
        }
    means: dict[str, tuple[float, int]] = {}
    for name, future in pending.items():
        try:
            logprobs = future.result()
        except ValueError as exc:  # longer than the scorer's context
            return LikelihoodPreference(reason=f"response {name.upper()} could not be scored: {exc}")
        if not logprobs:
            return LikelihoodPreference(reason=f"response {name.upper()} has no tokens to score")
        means[name] = (sum(logprobs) / len(logprobs), len(logprobs))
    (mean_a, n_a), (mean_b, n_b) = means["a"], means["b"]
    return LikelihoodPreference(
        round(mean_a, 4), round(mean_b, 4), n_a, n_b, round(likelihood_p_a(mean_a, mean_b), 4)
    )


async def likelihood_tie_break(instruction: str, response_a: str, response_b: str) -> LikelihoodPreference:
    """`likelihood_preference` on the current backbone, off the event loop (forward passes on the CPU,
    so other items' calls are not held up); a reason instead when it cannot score a given text."""
    score = current_scorer(
        _first_notice,
        "pairs whose grades are within the grade margin are decided by the grades alone (the likelihood "
        "tie-breaker needs a local GGUF backbone or a server that scores a given text; --tie-breaker "
        "orders asks the pairwise judgment instead)",
    )
    if score is None:
        return LikelihoodPreference(reason="the backbone cannot score a given text")
    return await asyncio.to_thread(likelihood_preference, score, instruction, response_a, response_b)
