"""`inspect_scorer`: a task's judge as an Inspect (inspect_ai) scorer.

    from inspect_ai import Task, eval
    scorer = cejudge_dspy.inspect_scorer("chat", backbone="simulated:0")
    task = Task(dataset=..., solver=generate(), scorer=scorer)

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

from typing import TYPE_CHECKING, Any

from cejudge_dspy.bridges._feedback import feedback_text, judgment_metadata
from cejudge_dspy.bridges._judge import JUDGE_ARGS, BridgeJudge, JudgeArgs
from cejudge_dspy.errors import CEJudgeError, known_keywords
from cejudge_dspy.tasks import TaskSpec

if TYPE_CHECKING:
    from typing_extensions import Unpack


@known_keywords(also=JUDGE_ARGS)
def inspect_scorer(
    task: str | TaskSpec,
    method: str | None = None,
    *,
    language: str | None = None,
    response_language: str | None = None,
    **judge: Unpack[JudgeArgs],
) -> Any:
    """An inspect_ai `Scorer` judging with `task`'s judge (`method` / `options`) on `backbone` (a
    `BackboneOptions`, a spec such as "simulated:0" with its default settings, a `dspy.LM`, or None: the LM
    current in DSPy's settings when a sample is scored); `options` and `backbone` are `BridgeJudge`'s
    (`JudgeArgs`). An unknown keyword is refused with the nearest known one. See the module docstring."""
    try:
        from inspect_ai.scorer import Score, Target, mean, scorer, stderr
        from inspect_ai.solver import TaskState
    except ImportError:
        raise CEJudgeError(
            "the Inspect scorer needs inspect_ai: pip install 'cejudge-dspy[inspect]'"
        ) from None

    bridge = BridgeJudge(task, method, **judge)

    @scorer(metrics=[mean(), stderr()], name=f"cejudge_{bridge.spec.name}_{bridge.method}")
    def cejudge_scorer() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            meta = state.metadata or {}
            item = bridge.item(
                state.input_text,
                state.output.completion,
                reference=target.text if bridge.mode == "pairwise" else None,
                language=meta.get("language") or language,
                response_language=meta.get("response_language") or response_language,
                item_id=str(state.sample_id),
            )
            judgment = await bridge.ajudge(item)
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
