"""CE-Judge: concepts and translation -> two checklists per response -> judgment on the original texts."""

from cejudge_dspy.methods.cejudge.judges import (
    PairwiseJudge,
    PointwiseJudge,
    cejudge_program,
    reference_default,
)
from cejudge_dspy.methods.cejudge.program import CEJudgeProgram
from cejudge_dspy.methods.cejudge.stages import (
    ChecklistFromInstruction,
    ChecklistFromResponse,
    Concepts,
    LinguisticConcepts,
    ScoreJudgment,
    Translate,
    VerdictJudgment,
)
from cejudge_dspy.methods.cejudge.understanding import Understanding, findings, translated_only

__all__ = [
    "CEJudgeProgram",
    "ChecklistFromInstruction",
    "ChecklistFromResponse",
    "Concepts",
    "LinguisticConcepts",
    "PairwiseJudge",
    "PointwiseJudge",
    "ScoreJudgment",
    "Translate",
    "Understanding",
    "VerdictJudgment",
    "cejudge_program",
    "findings",
    "reference_default",
    "translated_only",
]
