"""CheckEval: dimensions -> seed yes/no questions -> augment -> filter -> answers; score = share of Yes."""

from cejudge_dspy.methods.checkeval.answers import parse_answer, share_of_yes
from cejudge_dspy.methods.checkeval.build import build_checklist
from cejudge_dspy.methods.checkeval.checklist import Checklist, Question, default_checklist_path
from cejudge_dspy.methods.checkeval.judge import (
    CheckEvalJudge,
    checkeval_program,
    resolve_checklist,
)

__all__ = [
    "CheckEvalJudge",
    "Checklist",
    "Question",
    "build_checklist",
    "checkeval_program",
    "default_checklist_path",
    "parse_answer",
    "resolve_checklist",
    "share_of_yes",
]
