"""One result type per judged item: the judges return it, the runner writes it, the CLI prints it
and the metrics read it.

`status` is "ok" or "unparsed". An unparsed result carries no verdict and no score, only the stage
that failed and why: metrics exclude and count it, never grade it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from cejudge_dspy.usage import Usage

if TYPE_CHECKING:
    import dspy

Status = Literal["ok", "unparsed"]
Decision = Literal["argmax", "probability"]
DECISIONS: tuple[Decision, ...] = ("argmax", "probability")
ProbabilityStatus = Literal["ok", "unavailable", "not_located"]
UNAVAILABLE = "the backbone returns no token probabilities"
# What a record's `decided_by` says when one of CE-Judge's checks gave the score (cejudge/_checks.py);
# run summaries count each.
LANGUAGE_CHECK, LIKELIHOOD_CHECK = "language check", "likelihood check"
CHECK_NAMES = (LANGUAGE_CHECK, LIKELIHOOD_CHECK)
# An answer whose token log probabilities are impossible (NaN, infinite, above 0) is read as one without
# any (backbones.logprobs_problem): its probabilities are unavailable, and this, with the value, says why.
IMPOSSIBLE = "the backbone returned impossible token log probabilities"


def is_unavailable(reason: str | None) -> bool:
    """Whether a probability reading's `reason` means there were no probabilities to read (none given, or
    impossible ones), rather than that the answer's token was not found among them."""
    return reason == UNAVAILABLE or (reason or "").startswith(IMPOSSIBLE)


@dataclass
class Probabilities:
    """What the judge's token probabilities say, beside its argmax answer (see `_probabilities.py`).

    `status`: "ok"; "unavailable" (the backbone returns none); "not_located" (the answer's token was
    not found, `reason` says why; the probability rule then keeps the argmax answer). Pairwise: p(A)
    averaged over the orders, its `confidence` and the `verdict` it gives with `tie_band`. Pointwise:
    the `distribution` over the scale's levels and the expected `score`. CheckEval: mean P(yes) per
    dimension in `dimension_scores`, and over all questions in `score`.
    """

    status: ProbabilityStatus
    reason: str | None = None
    p_a: float | None = None
    confidence: float | None = None
    tie_band: float | None = None
    verdict: Literal["A", "B", "tie"] | None = None
    distribution: dict[str, float] = field(default_factory=dict)
    score: float | None = None
    dimension_scores: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class Argmax:
    """The judge's argmax answer, kept beside a headline the probability rule decided."""

    verdict: Literal["A", "B", "tie"] | None = None
    score: float | None = None
    dimension_scores: dict[str, float] = field(default_factory=dict)


@dataclass
class OrderResult:
    """One presentation order of a pairwise judgment. `verdict` is mapped back to the item's own
    positions; `shown_verdict` is what the model said in this order."""

    order: Literal["AB", "BA"]
    verdict: Literal["A", "B"] | None
    shown_verdict: Literal["A", "B"] | None
    answers: list[str] = field(default_factory=list)
    feedback: str = ""
    error: str | None = None
    raw: str | None = None  # the model's unparsable output, kept for inspection
    # P(the response shown first is better), normalised over A/B at the verdict token; None when the
    # backbone gave no probabilities or the token was not found (`probability_error` says which).
    p_first: float | None = None
    probability_error: str | None = None


@dataclass
class GradeResult:
    """One response judged on its own (the graded pairwise judgment): yes / partly / no.

    `value` is the argmax label's worth (1, 0.5, 0); `p_value` the expected worth under the label
    distribution read at the label's token (None when the backbone gave none or the token was not
    found: `probability_error` says which). `error` is set, and the label None, when the grade could
    not be parsed; the pairwise judgment then decides the item.
    """

    label: Literal["yes", "partly", "no"] | None
    value: float | None = None
    p_value: float | None = None
    distribution: dict[str, float] = field(default_factory=dict)
    feedback: str = ""
    probability_error: str | None = None
    error: str | None = None
    raw: str | None = None


@dataclass
class JudgeResult:
    mode: Literal["pointwise", "pairwise"]
    status: Status
    method: str = "cejudge"
    verdict: Literal["A", "B", "tie"] | None = None
    score: float | None = None
    # Method-specific scores, e.g. CheckEval's share of Yes per dimension.
    dimension_scores: dict[str, float] = field(default_factory=dict)
    consistent: bool | None = None
    feedback: str = ""
    answers: list[str] = field(default_factory=list)
    orders: list[OrderResult] = field(default_factory=list)
    # Per response ("response" pointwise; "a"/"b" pairwise): the concatenated checklist the judge saw,
    # and its two directions kept apart for inspection.
    checklists: dict[str, list[str]] = field(default_factory=dict)
    checklist_parts: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    concepts: dict[str, list[str]] = field(default_factory=dict)
    translations: dict[str, str] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    error_stage: str | None = None
    # Method-specific detail worth keeping in the results file (e.g. CheckEval's per-question answers).
    details: dict[str, Any] = field(default_factory=dict)
    # The rule behind `verdict`/`score`/`dimension_scores`: the argmax answer, or the token probabilities.
    # Records written before the rule existed read as argmax, with no `argmax` or `probabilities`.
    decision: Decision = "argmax"
    argmax: Argmax | None = None
    probabilities: Probabilities | None = None
    # Graded pairwise judgment: each response ("a", "b") judged on its own; `decided_by` says whether
    # the grades or the pairwise judgment in `orders` gave the verdict ("grades" / "orders"; "" when
    # the method has no grades).
    grades: dict[str, GradeResult] = field(default_factory=dict)
    decided_by: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"usage": self.usage.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JudgeResult:
        data = dict(data)
        data["orders"] = [OrderResult(**o) for o in data.get("orders", [])]
        data["usage"] = Usage.from_dict(data.get("usage", {}))
        if isinstance(data.get("argmax"), dict):
            data["argmax"] = Argmax(**data["argmax"])
        if isinstance(data.get("probabilities"), dict):
            data["probabilities"] = Probabilities(**data["probabilities"])
        data["grades"] = {k: GradeResult(**g) for k, g in (data.get("grades") or {}).items()}
        return cls(**data)

    def under(self, rule: Decision) -> JudgeResult:
        """This result with its headline (`verdict`, `score`, `dimension_scores`) as `rule` decides.

        The probability rule keeps the argmax answer where probabilities are missing (unavailable or not
        located: `probabilities` says which), so both rules score the same items."""
        if rule == self.decision or not self.ok:
            return self
        if rule == "argmax":
            kept = self.argmax or Argmax()
            return replace(
                self,
                decision="argmax",
                verdict=kept.verdict,
                score=kept.score,
                dimension_scores=dict(kept.dimension_scores),
            )
        return decide(self, rule)

    def to_prediction(self) -> dspy.Prediction:
        """A `dspy.Prediction` whose fields are this result's fields, plus `result` itself."""
        import dspy  # here: reading a run's records (a resume, `view`) never needs DSPy's import

        fields = {k: getattr(self, k) for k in self.__dataclass_fields__}
        return dspy.Prediction(result=self, **fields)


def unparsed(
    mode: Literal["pointwise", "pairwise"], stage: str, reason: str, raw: str | None = None, **partial: Any
) -> JudgeResult:
    """An explicit unparsed outcome: which stage failed and why (and its raw output), with whatever
    was computed before."""
    details = {**partial.pop("details", {}), **({"raw": raw[:4000]} if raw else {})}
    return JudgeResult(
        mode=mode, status="unparsed", error=reason, error_stage=stage, details=details, **partial
    )


def swap_verdict(verdict: Literal["A", "B"]) -> Literal["A", "B"]:
    """Map a verdict given on swapped positions back to the original ones (pure and invertible)."""
    return "B" if verdict == "A" else "A"


def reconcile(orders: list[OrderResult]) -> tuple[Literal["A", "B", "tie"] | None, bool | None]:
    """Combine per-order verdicts: agreement gives the verdict, disagreement a tie with consistent=False.

    One order gives its verdict with consistent=None (the paper's single-order behaviour). Any order
    without a verdict makes the whole judgment verdict-less: it is reported unparsed, not guessed.
    """
    verdicts = [o.verdict for o in orders]
    if not verdicts or any(v is None for v in verdicts):
        return None, None
    if len(verdicts) == 1:
        return verdicts[0], None
    if len(set(verdicts)) == 1:
        return verdicts[0], True
    return "tie", False


def decide(result: JudgeResult, rule: Decision) -> JudgeResult:
    """Set the headline of a result judged by argmax (with `probabilities` filled in) by `rule`.

    The argmax answer is kept in `argmax`; under the probability rule the headline becomes the
    probability verdict or score where `probabilities.status` is "ok", and stays the argmax elsewhere
    (`decision` then says "argmax", so a reader sees which rule decided each record)."""
    if not result.ok:
        return result
    kept = result.argmax or Argmax(result.verdict, result.score, dict(result.dimension_scores))
    probs = result.probabilities
    if rule == "argmax" or probs is None or not probs.ok:
        return replace(
            result,
            decision="argmax",
            argmax=kept,
            verdict=kept.verdict,
            score=kept.score,
            dimension_scores=dict(kept.dimension_scores),
        )
    return replace(
        result,
        decision="probability",
        argmax=kept,
        verdict=probs.verdict if result.mode == "pairwise" else None,
        score=probs.score if probs.score is not None else kept.score,
        dimension_scores=dict(probs.dimension_scores)
        if probs.dimension_scores
        else dict(kept.dimension_scores),
    )
