"""CE-Judge programs: `PointwiseJudge` (_pointwise.py: a score on the task's scale), `PairwiseJudge`
(_pairwise.py: A or B), and `cejudge_program`, which builds the one a task needs from run options.

One item's journey, as the method prescribes:
  concepts of the original texts | English translations          (all at once)
  -> checklist response->instruction | instruction->response      (per response, all at once)
  -> judgment on the untranslated texts plus the concatenated checklist(s)
The stages and the understanding of one response live in _program.py; the record fields filled from
it in _understanding.py.
"""

from __future__ import annotations

from typing import Literal

import dspy

from cejudge_dspy.judges._option_choices import reference_default
from cejudge_dspy.judges.cejudge._pairwise import Judgment, PairwiseJudge
from cejudge_dspy.judges.cejudge._pointwise import PointwiseJudge
from cejudge_dspy.judges.cejudge._program import Directions, JudgeOn
from cejudge_dspy.judges.cejudge._tiebreak import DEFAULT_TIE_BREAKER, TieBreaker
from cejudge_dspy.judges.verdicts import DEFAULT_GRADE_MARGIN, DEFAULT_TIE_BAND, Decision
from cejudge_dspy.tasks import TaskSpec


def cejudge_program(
    spec: TaskSpec,
    translator: str = "llm",
    orders: Literal["both", "single"] = "both",
    decision: Decision = "probability",
    tie_band: float = DEFAULT_TIE_BAND,
    judgment: Judgment = "graded",
    grade_margin: float = DEFAULT_GRADE_MARGIN,
    reference: bool | None = None,
    tie_breaker: TieBreaker = DEFAULT_TIE_BREAKER,
    language_check: bool = True,
    likelihood_check: bool = True,
    concepts: bool = True,
    directions: Directions = "both",
    judge_on: JudgeOn = "original",
    answers: bool = False,
) -> dspy.Module:
    """The `cejudge` method: the task's pairwise or pointwise CE-Judge (ablations: see _program.py).
    `reference=None`: the mode's default (`reference_default`)."""
    ablations = {"concepts": concepts, "directions": directions, "judge_on": judge_on}
    reference = reference_default(spec.mode) if reference is None else reference
    if spec.mode == "pairwise":
        return PairwiseJudge(
            spec,
            translator=translator,
            orders=orders,
            decision=decision,
            tie_band=tie_band,
            judgment=judgment,
            grade_margin=grade_margin,
            reference=reference,
            tie_breaker=tie_breaker,
            **ablations,
        )
    return PointwiseJudge(
        spec,
        translator=translator,
        decision=decision,
        language_check=language_check,
        likelihood_check=likelihood_check,
        reference=reference,
        answers=answers,
        **ablations,
    )
