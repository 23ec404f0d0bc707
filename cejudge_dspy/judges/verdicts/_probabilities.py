"""Verdicts from the judge's token probabilities: pure arithmetic, no LM and no DSPy.

The judge already computed a distribution at the token that carries its answer; the argmax throws it
away. _token_reading.py finds that token in a judgment's output and reads the distribution there over
the allowed values only (`A`/`B`, a scale's levels, `yes`/`no`): `tokens_from_logprobs`, `value_starts`,
`read_value`, `read_field`, `read_list_field`. Where the value cannot be found the reading says why;
callers then keep the argmax answer. Importers take those names, and the decisions below, from
`cejudge_dspy.judges.verdicts`.

Decisions built on a reading live here: `debiased_preference` (pairwise, both presentation orders
averaged in probability space), `verdict_from_preference` (A, B, or a tie inside the tie band),
`expected_score` (the G-Eval score), `grade_value` and `graded_preference` (the graded judgment) and
`mean_yes` (RocketEval's checklist value).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

# The tie band's and the grade margin's defaults are options' values: their reasons are in
# judges/_option_choices.py.
from cejudge_dspy.judges._option_choices import DEFAULT_GRADE_MARGIN, DEFAULT_TIE_BAND  # noqa: F401 - the face's


def debiased_preference(p_first_ab: float | None, p_first_ba: float | None) -> float | None:
    """p(A): the probability that the item's response A is better, averaged over the orders judged.

    `p_first_ab` is P(shown first is better) with A shown first; `p_first_ba` the same with B shown
    first, so there A's probability is 1 - p_first_ba. An order not judged is None and left out;
    None when neither was.
    """
    values = [p for p in (p_first_ab, None if p_first_ba is None else 1.0 - p_first_ba) if p is not None]
    return sum(values) / len(values) if values else None


def verdict_from_preference(p_a: float, tie_band: float = DEFAULT_TIE_BAND) -> Literal["A", "B", "tie"]:
    """A or B from p(A); a tie when p(A) lies within `tie_band`/2 of 0.5 (both ends included)."""
    if abs(p_a - 0.5) <= tie_band / 2:
        return "tie"
    return "A" if p_a > 0.5 else "B"


def confidence(p_a: float) -> float:
    """The probability of the side p(A) leans to: max(p(A), 1 - p(A)), in [0.5, 1]."""
    return max(p_a, 1.0 - p_a)


def expected_score(distribution: Mapping[str, float]) -> float:
    """The G-Eval score: the scale's levels weighted by their probabilities (which sum to 1)."""
    return sum(float(level) * p for level, p in distribution.items())


# A graded judgment's labels and what each is worth; the pairwise verdict compares two responses' values.
GRADES: tuple[str, ...] = ("yes", "partly", "no")
GRADE_VALUES: dict[str, float] = {"yes": 1.0, "partly": 0.5, "no": 0.0}


def grade_value(distribution: Mapping[str, float]) -> float:
    """The expected value of a graded judgment: P(yes) + 0.5 P(partly)."""
    return sum(GRADE_VALUES[label] * p for label, p in distribution.items())


def graded_preference(value_a: float, value_b: float) -> float:
    """p(A) from two responses' grade values in [0, 1]: 0.5 plus half their difference."""
    return 0.5 + (value_a - value_b) / 2


def mean_yes(p_yes: Iterable[float | None]) -> float | None:
    """RocketEval's checklist value: the mean P(yes) over the questions read (None ones excluded)."""
    values = [p for p in p_yes if p is not None]
    return sum(values) / len(values) if values else None
