"""G-Eval, CheckEval's baseline: each declared dimension rated on a Likert scale, the expected rating read
from the token probabilities of its level (`--method geval`)."""

from cejudge_dspy.judges.geval._judge import GEvalJudge, geval_program

__all__ = ["GEvalJudge", "geval_program"]
