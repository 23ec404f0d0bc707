"""CheckEval: dimensions -> seed yes/no questions -> augment -> filter -> answers; score = share of Yes."""

from cejudge_dspy.judges.checkeval._answers import parse_answer, share_of_yes
from cejudge_dspy.judges.checkeval._build import build_checklist
from cejudge_dspy.judges.checkeval._checklist import (
    REVIEW_REASONS,
    Checklist,
    Question,
    beside,
    default_checklist_path,
    overwrite_hazard,
)
from cejudge_dspy.judges.checkeval._judge import CheckEvalJudge, checkeval_program, resolve_checklist

__all__ = [
    "CheckEvalJudge",
    "Checklist",
    "Question",
    "REVIEW_REASONS",
    "beside",
    "build_checklist",
    "checkeval_program",
    "default_checklist_path",
    "overwrite_hazard",
    "parse_answer",
    "resolve_checklist",
    "share_of_yes",
]
