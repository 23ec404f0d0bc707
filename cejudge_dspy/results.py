"""One result type per judged item: the judges return it, the runner writes it, the CLI prints it
and the metrics read it.

`status` is "ok" or "unparsed". An unparsed result carries no verdict and no score, only the stage
that failed and why: metrics exclude and count it, never grade it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import dspy

from cejudge_dspy.usage import Usage

Status = Literal["ok", "unparsed"]


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
        return cls(**data)

    def to_prediction(self) -> dspy.Prediction:
        """A `dspy.Prediction` whose fields are this result's fields, plus `result` itself."""
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
