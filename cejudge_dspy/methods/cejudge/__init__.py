"""CE-Judge: concepts and translation -> two checklists per response -> judgment on the original texts."""

from cejudge_dspy.methods.cejudge.judges import (
    CEJudgeProgram,
    PairwiseJudge,
    PointwiseJudge,
    cejudge_program,
    translated_only,
)
from cejudge_dspy.methods.cejudge.stages import (
    ChecklistFromInstruction,
    ChecklistFromResponse,
    Concepts,
    ScoreJudgment,
    Translate,
    VerdictJudgment,
)

__all__ = [
    "CEJudgeProgram",
    "ChecklistFromInstruction",
    "ChecklistFromResponse",
    "Concepts",
    "PairwiseJudge",
    "PointwiseJudge",
    "ScoreJudgment",
    "Translate",
    "VerdictJudgment",
    "cejudge_program",
    "translated_only",
]
