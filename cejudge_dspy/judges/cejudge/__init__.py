"""CE-Judge: concepts and translation -> two checklists per response -> judgment on the original texts."""

from cejudge_dspy.judges._option_choices import (
    DEFAULT_TIE_BREAKER,
    DIRECTIONS,
    JUDGE_ON,
    JUDGMENTS,
    TIE_BREAKERS,
)
from cejudge_dspy.judges.cejudge._judges import cejudge_program, reference_default
from cejudge_dspy.judges.cejudge._pairwise import PairwiseJudge, shown_first
from cejudge_dspy.judges.cejudge._pointwise import PointwiseJudge
from cejudge_dspy.judges.cejudge._program import CEJudgeProgram
from cejudge_dspy.judges.cejudge._signatures import TASK_DESC, TranslateForReference
from cejudge_dspy.judges.cejudge._stages import (
    ChecklistFromInstruction,
    ChecklistFromResponse,
    Concepts,
    LinguisticConcepts,
    ScoreJudgment,
    Translate,
    VerdictJudgment,
)
from cejudge_dspy.judges.cejudge._understanding import Understanding, findings, translated_only
from cejudge_dspy.judges.verdicts import CHECK_NAMES

__all__ = [
    "DIRECTIONS",
    "JUDGE_ON",
    "JUDGMENTS",
    "CEJudgeProgram",
    "CHECK_NAMES",
    "ChecklistFromInstruction",
    "ChecklistFromResponse",
    "Concepts",
    "DEFAULT_TIE_BREAKER",
    "LinguisticConcepts",
    "PairwiseJudge",
    "PointwiseJudge",
    "ScoreJudgment",
    "TASK_DESC",
    "TIE_BREAKERS",
    "Translate",
    "TranslateForReference",
    "Understanding",
    "VerdictJudgment",
    "cejudge_program",
    "findings",
    "reference_default",
    "shown_first",
    "translated_only",
]
