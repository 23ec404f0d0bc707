"""The graded pairwise judgment: each response judged on its own, the pair decided from the two grades.

Measured on the embedded 1.5B backbone (docs/measurements/pairwise-verdicts.md): shown two
responses at once, a small judge prefers a position and follows whichever response it read last; asked
about one response at a time ("does it do what is asked: yes, partly or no?"), it is right far more
often, and no presentation order exists to bias it. So a pair is decided from the two grades when they
separate, and a tie-breaker (_tiebreak.py) decides when they do not: by default the backbone's likelihood
of each response as its own answer, or CE-Judge's pairwise judgment in both orders ("orders"):

- argmax rule: the labels differ (yes > partly > no) -> the better label wins; equal labels -> the
  tie-breaker;
- probability rule: the expected grade values (P(yes) + 0.5 P(partly)) differ by more than the margin
  (default 0.1) -> p(A) = 0.5 + (value_a - value_b) / 2; otherwise p(A) from the tie-breaker (the
  likelihood's, or the orders' averaged over both).

The tie-breaker runs only when the run's own rule needs it (the pairwise judgment is the costly call:
both responses and both checklists, in two orders). A run under the probability rule is still readable
under the argmax rule: where equal labels were decided by their expected grades, the argmax reading is a
tie; where the likelihood decided them, it is the likelihood's verdict (as an argmax run gives).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import dspy

from cejudge_dspy.judges._machinery._probability_readings import unavailable_reason
from cejudge_dspy.judges._machinery._stage import StageFailure
from cejudge_dspy.judges.cejudge._tiebreak import LikelihoodPreference
from cejudge_dspy.judges.verdicts import (
    GRADE_VALUES,
    GRADES,
    UNAVAILABLE,
    GradeResult,
    Probabilities,
    grade_value,
    graded_preference,
    is_unavailable,
    read_field,
)

Verdict = Literal["A", "B", "tie"]


def grade_from(pred: dspy.Prediction) -> GradeResult:
    """A parsed grade with its label distribution (when the backbone gave token probabilities)."""
    tokens = getattr(pred, "tokens", None)
    distribution: dict[str, float] = {}
    why: str | None = unavailable_reason(pred)
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
    # What gave each: the grades, or the tie-breaker that decided a pair the grades left open.
    argmax_by: str = "grades"
    p_by: str = "grades"

    def decided_by(self, shown: bool) -> dict[str, str]:
        """The record's `decided_by` per rule; `shown`: the pairwise judgment ran (in `orders`)."""
        return {
            "argmax": self.argmax_by if self.argmax_verdict or not shown else "orders",
            "probability": self.p_by if self.p_a is not None else "orders",
        }

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


def broken_tie(call: GradedCall, liked: LikelihoodPreference) -> GradedCall:
    """`call` with what its grades left open decided by the likelihood tie-breaker (_tiebreak.py): the
    verdict where the labels are equal, p(A) where the expected grades are within the margin."""
    from_labels = call.argmax_verdict is not None
    from_grades = call.p_a is not None
    return GradedCall(
        call.argmax_verdict if from_labels else liked.verdict,
        call.p_a if from_grades else liked.p_a,
        call.readable,
        argmax_by=call.argmax_by if from_labels else "likelihood",
        p_by=call.p_by if from_grades else "likelihood",
    )


def unread_grades(grades: dict[str, GradeResult]) -> Probabilities:
    """The record's probabilities when a grade has none: unavailable, or not located and why."""
    whys = {g.probability_error or g.error or "" for g in grades.values() if g.p_value is None}
    if whys and all(is_unavailable(why) for why in whys):
        return Probabilities(status="unavailable", reason=min(whys, key=lambda w: (w == UNAVAILABLE, w)))
    reason = "; ".join(
        f"grade {k.upper()}: {g.probability_error or g.error}" for k, g in grades.items() if g.p_value is None
    )
    return Probabilities(status="not_located", reason=reason)


def graded_feedback(grades: dict[str, GradeResult], note: str = "") -> str:
    """Both responses' grades in words, for the record's `feedback` (then `note`: what broke a tie)."""
    parts = []
    for name, grade in grades.items():
        said = grade.label if grade.label is not None else f"no grade ({grade.error})"
        parts.append(f"Response {name.upper()}: {said}." + (f" {grade.feedback}" if grade.feedback else ""))
    return " ".join(parts + ([note] if note else []))
