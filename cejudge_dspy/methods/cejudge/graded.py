"""The graded pairwise judgment: each response judged on its own, the pair decided from the two grades.

Measured on the embedded 1.5B backbone (README, "How a pairwise verdict is reached"): shown two
responses at once, a small judge prefers a position and follows whichever response it read last; asked
about one response at a time ("does it do what is asked: yes, partly or no?"), it is right far more
often, and no presentation order exists to bias it. So a pair is decided from the two grades when they
separate, and the pairwise judgment (CE-Judge's own, in both orders) breaks the tie when they do not:

- argmax rule: the labels differ (yes > partly > no) -> the better label wins; equal labels -> orders;
- probability rule: the expected grade values (P(yes) + 0.5 P(partly)) differ by more than the margin
  (default 0: any difference) -> p(A) = 0.5 + (value_a - value_b) / 2; otherwise p(A) from the orders,
  averaged over both.

The pairwise judgment runs only when the run's own rule needs it (it is the costly call: both responses
and both checklists, in two orders). A run under the probability rule is still readable under the argmax
rule: where equal labels were decided by their expected grades, the argmax reading is a tie.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import dspy

from cejudge_dspy.methods.stages import StageFailure
from cejudge_dspy.probabilities import (
    GRADE_VALUES,
    GRADES,
    grade_value,
    graded_preference,
    read_field,
)
from cejudge_dspy.results import UNAVAILABLE, GradeResult, Probabilities

Verdict = Literal["A", "B", "tie"]


def grade_from(pred: dspy.Prediction) -> GradeResult:
    """A parsed grade with its label distribution (when the backbone gave token probabilities)."""
    tokens = getattr(pred, "tokens", None)
    distribution: dict[str, float] = {}
    why: str | None = UNAVAILABLE
    if tokens is not None:
        reading = read_field(tokens, None, "fulfils", GRADES)
        distribution, why = (reading.distribution or {}), reading.reason
    return GradeResult(
        label=pred.fulfils,
        value=GRADE_VALUES[pred.fulfils],
        p_value=grade_value(distribution) if distribution else None,
        distribution=distribution,
        feedback=str(getattr(pred, "feedback", "") or "").strip(),
        probability_error=None if distribution else why,
    )


def failed_grade(failure: StageFailure) -> GradeResult:
    """A grade that could not be parsed: recorded with its reason; the pairwise judgment decides."""
    raw = failure.raw if failure.raw is None else failure.raw[:2000]
    return GradeResult(label=None, error=failure.reason, raw=raw)


@dataclass(frozen=True)
class GradedCall:
    """What two grades decide by themselves, per rule (None: the pairwise judgment must decide).

    `readable`: both grades carry probabilities. Without them the probability rule keeps the argmax
    verdict (as everywhere), so only the argmax rule can need the pairwise judgment."""

    argmax_verdict: Literal["A", "B"] | None
    p_a: float | None
    readable: bool

    def needs_orders(self, decision: str) -> bool:
        """Whether the run's decision rule needs the pairwise judgment for this pair. Only the run's rule
        pays for it: under the probability rule, equal labels whose expected grades separate need no
        orders (the argmax reading of such a pair is then a tie, see `argmax_reading`)."""
        if decision == "argmax" or not self.readable:
            return self.argmax_verdict is None
        return self.p_a is None


def graded_call(a: GradeResult, b: GradeResult, margin: float) -> GradedCall:
    """Decide a pair from its grades where they separate (see the module docstring)."""
    argmax: Literal["A", "B"] | None = None
    if a.value is not None and b.value is not None and a.value != b.value:
        argmax = "A" if a.value > b.value else "B"
    p_a = None
    readable = a.p_value is not None and b.p_value is not None
    if a.p_value is not None and b.p_value is not None and abs(a.p_value - b.p_value) > margin:
        p_a = graded_preference(a.p_value, b.p_value)
    return GradedCall(argmax, p_a, readable)


def unread_grades(grades: dict[str, GradeResult]) -> Probabilities:
    """The record's probabilities when a grade has none: unavailable, or not located and why."""
    whys = {g.probability_error or g.error or "" for g in grades.values() if g.p_value is None}
    if whys <= {UNAVAILABLE}:
        return Probabilities(status="unavailable", reason=UNAVAILABLE)
    reason = "; ".join(
        f"grade {k.upper()}: {g.probability_error or g.error}" for k, g in grades.items() if g.p_value is None
    )
    return Probabilities(status="not_located", reason=reason)


def graded_feedback(grades: dict[str, GradeResult]) -> str:
    """Both responses' grades in words, for the record's `feedback`."""
    parts = []
    for name, grade in grades.items():
        said = grade.label if grade.label is not None else f"no grade ({grade.error})"
        parts.append(f"Response {name.upper()}: {said}." + (f" {grade.feedback}" if grade.feedback else ""))
    return " ".join(parts)
