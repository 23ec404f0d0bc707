"""The judge where users already evaluate: a DSPy metric (`JudgeMetric`, for `dspy.Evaluate` and GEPA)
and an Inspect scorer (`inspect_scorer`, with the `inspect` extra). Both judge one output at a time with a
task's judge on a backbone the caller chooses; neither writes a run directory. Both take the judge and its
backbone as `JudgeArgs` (`options=`, `backbone=`) beside the task and the method.

`inspect_ai` is imported only when `inspect_scorer` is called."""

from cejudge_dspy.bridges._inspect import inspect_scorer
from cejudge_dspy.bridges._judge import JudgeArgs
from cejudge_dspy.bridges._metric import DEFAULT_FIELDS, JudgeMetric, UnparsedJudgment

__all__ = ["DEFAULT_FIELDS", "JudgeArgs", "JudgeMetric", "UnparsedJudgment", "inspect_scorer"]
