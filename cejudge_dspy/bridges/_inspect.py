"""`inspect_scorer`: a task's judge as an Inspect (inspect_ai) scorer.

    from inspect_ai import Task, eval
    task = Task(dataset=..., solver=generate(), scorer=cejudge_dspy.inspect_scorer("chat", lm="simulated:0"))

The scorer grades a sample's output (`state.output.completion`) given its input (`state.input_text`) as
the instruction: pointwise tasks score the output on the task's scale, mapped onto [0, 1]; pairwise tasks
compare it with the sample's target as the reference response (1: the output is better, 0.5: a tie, 0:
the target is better). The score's metadata keeps the verdict and p(A), or the score, its range and the
dimension scores, and the checklists with the judge's answers; its explanation is the judgment in words
(_feedback.py). A sample's language is read from its metadata (`language`, `response_language`), else
the scorer's `language`, else the task's default. An output the judge could not read is
`Score.unscored()`: Inspect leaves it out of the metrics and keeps the reason.

inspect_ai is imported when this function is called, never when cejudge_dspy is imported (the `inspect`
extra installs it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cejudge_dspy.bridges._feedback import feedback_text, judgment_metadata
from cejudge_dspy.bridges._judge import BridgeJudge
from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.judges import JudgeOptions
from cejudge_dspy.tasks import TaskSpec


def inspect_scorer(
    task: str | TaskSpec,
    method: str | None = None,
    *,
    options: JudgeOptions | None = None,
    lm: Any = None,
    lm_options: Mapping[str, Any] | None = None,
    language: str | None = None,
    response_language: str | None = None,
) -> Any:
    """An inspect_ai `Scorer` judging with `task`'s judge (`method` / `options`) on the backbone `lm` (a
    spec such as "simulated:0" with `lm_options`, a `dspy.LM`, or None: the LM current in DSPy's settings
    when a sample is scored). See the module docstring."""
    try:
        from inspect_ai.scorer import Score, Target, mean, scorer, stderr
        from inspect_ai.solver import TaskState
    except ImportError:
        raise CEJudgeError(
            "the Inspect scorer needs inspect_ai: pip install 'cejudge-dspy[inspect]'"
        ) from None

    judge = BridgeJudge(task, method, options=options, lm=lm, lm_options=lm_options)

    @scorer(metrics=[mean(), stderr()], name=f"cejudge_{judge.spec.name}_{judge.method}")
    def cejudge_scorer() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            meta = state.metadata or {}
            item = judge.item(
                state.input_text,
                state.output.completion,
                reference=target.text if judge.mode == "pairwise" else None,
                language=meta.get("language") or language,
                response_language=meta.get("response_language") or response_language,
                item_id=str(state.sample_id),
            )
            judgment = await judge.ajudge(item)
            explanation, metadata = feedback_text(judgment), judgment_metadata(judgment)
            if not judgment.ok:
                return Score.unscored(explanation=explanation, metadata=metadata)
            return Score(
                value=judgment.score,
                answer=state.output.completion,
                explanation=explanation,
                metadata=metadata,
            )

        return score

    return cejudge_scorer()
