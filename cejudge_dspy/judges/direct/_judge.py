"""The direct baseline: one judgment call on the same backbone, no concepts, translations or checklists.

It shows what checklist engineering buys: `cejudge evaluate --method direct` beside `--method cejudge`.
Pairwise still judges both orders, so the comparison isolates the checklist, not the order handling.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import dspy

from cejudge_dspy.data import normalize_language, require_text
from cejudge_dspy.judges._machinery._probability_readings import (
    check_decision,
    check_tie_band,
    pairwise_probabilities,
    score_probabilities,
)
from cejudge_dspy.judges._machinery._stage import StageFailure, judge_order
from cejudge_dspy.judges._machinery._sync_bridge import run_sync
from cejudge_dspy.judges.cejudge import ScoreJudgment, VerdictJudgment, shown_first
from cejudge_dspy.judges.verdicts import (
    DEFAULT_TIE_BAND,
    Decision,
    JudgeResult,
    OrderResult,
    decide,
    reconcile,
    unparsed,
)
from cejudge_dspy.tasks import TaskSpec, load_task
from cejudge_dspy.usage import Usage, about, collecting


class DirectScore(dspy.Signature):
    """Judge one response against the instruction and give it a score on the task's scale.

    The instruction and response are given in their original languages; judge them as written. Write concise
    feedback that weighs the strengths and weaknesses against the criteria, then give the single score whose
    level description fits the response best."""

    task: str = dspy.InputField(desc="What is being judged and in what role, as declared by the task.")
    criteria: str = dspy.InputField(desc="What a good response does, as declared by the task.")
    scale: dict[int, str] = dspy.InputField(desc="Every score level with its description.")
    instruction: str = dspy.InputField(desc="The instruction or source text.")
    response: str = dspy.InputField(desc="The response to judge.")
    feedback: str = dspy.OutputField(desc="Concise feedback that justifies the score.")
    score: int = dspy.OutputField(desc="One integer level from the scale.")


class DirectVerdict(dspy.Signature):
    """Decide which of two responses better follows the instruction.

    The instruction and both responses are given in their original languages; judge them as written. Write
    concise feedback comparing the two against the criteria, then name the better response: A or B. The order
    in which the responses appear says nothing about their quality."""

    task: str = dspy.InputField(desc="What is being judged and in what role, as declared by the task.")
    criteria: str = dspy.InputField(desc="What a good response does, as declared by the task.")
    instruction: str = dspy.InputField(desc="The instruction.")
    response_a: str = dspy.InputField(desc="Response A.")
    response_b: str = dspy.InputField(desc="Response B.")
    feedback: str = dspy.OutputField(desc="Concise comparative feedback that justifies the verdict.")
    verdict: Literal["A", "B"] = dspy.OutputField(desc="The better response: A or B.")


class _DirectScoreStage(ScoreJudgment):
    signature = DirectScore


class _DirectVerdictStage(VerdictJudgment):
    signature = DirectVerdict


class DirectPointwiseJudge(dspy.Module):
    def __init__(self, task: str | TaskSpec = "literary", decision: Decision = "probability") -> None:
        super().__init__()
        self.spec = load_task(task)
        self.decision = check_decision(decision)
        self.judge = _DirectScoreStage()

    async def aforward(
        self, instruction: str, response: str, language: str = "en", response_language: str | None = None
    ) -> dspy.Prediction:
        instruction, response = require_text(instruction, "instruction"), require_text(response, "response")
        normalize_language(language)
        usage = Usage()
        with collecting(usage, expected_calls=1):
            try:
                pred = await self.judge.acall(
                    task=self.spec.task,
                    criteria=self.spec.criteria,
                    scale=self.spec.scale,
                    instruction=instruction,
                    response=response,
                )
            except StageFailure as failure:
                return unparsed(
                    "pointwise", failure.stage, failure.reason, method="direct", usage=usage
                ).to_prediction()
        result = JudgeResult(
            mode="pointwise",
            status="ok",
            method="direct",
            score=pred.score,
            feedback=pred.feedback,
            usage=usage,
            probabilities=score_probabilities(pred, sorted(self.spec.scale)),
        )
        return decide(result, self.decision).to_prediction()

    def forward(self, **kwargs: Any) -> dspy.Prediction:
        return run_sync(self.aforward(**kwargs))


class DirectPairwiseJudge(dspy.Module):
    def __init__(
        self,
        task: str | TaskSpec = "chat",
        orders: Literal["both", "single"] = "both",
        decision: Decision = "probability",
        tie_band: float = DEFAULT_TIE_BAND,
    ) -> None:
        super().__init__()
        self.spec = load_task(task)
        self.orders = orders
        self.decision = check_decision(decision)
        self.tie_band = check_tie_band(tie_band)
        self.judge = _DirectVerdictStage()

    async def aforward(
        self, instruction: str, response_a: str, response_b: str, language: str = "en"
    ) -> dspy.Prediction:
        instruction = require_text(instruction, "instruction")
        a, b = require_text(response_a, "response_a"), require_text(response_b, "response_b")
        normalize_language(language)
        usage = Usage()
        plan = [("AB", a, b)] + ([("BA", b, a)] if self.orders == "both" else [])
        with collecting(usage, expected_calls=len(plan)):
            orders = list(await asyncio.gather(*(self._one(instruction, *p) for p in plan)))
        verdict, consistent = reconcile(orders)
        if verdict is None:
            failed = next(o for o in orders if o.verdict is None)
            return unparsed(
                "pairwise", failed.order, str(failed.error), method="direct", orders=orders, usage=usage
            ).to_prediction()
        result = JudgeResult(
            mode="pairwise",
            status="ok",
            method="direct",
            verdict=verdict,
            consistent=consistent,
            feedback=orders[0].feedback,
            orders=orders,
            usage=usage,
            probabilities=pairwise_probabilities(orders, self.tie_band),
        )
        return decide(result, self.decision).to_prediction()

    async def _one(
        self, instruction: str, order: Literal["AB", "BA"], first: str, second: str
    ) -> OrderResult:
        return await about(
            shown_first(order),
            judge_order(
                self.judge,
                order,
                task=self.spec.task,
                criteria=self.spec.criteria,
                instruction=instruction,
                response_a=first,
                response_b=second,
            ),
        )

    def forward(self, **kwargs: Any) -> dspy.Prediction:
        return run_sync(self.aforward(**kwargs))


def direct_program(
    spec: TaskSpec,
    orders: Literal["both", "single"] = "both",
    decision: Decision = "probability",
    tie_band: float = DEFAULT_TIE_BAND,
) -> dspy.Module:
    """The `direct` method: one judgment call per order, no concepts, translation or checklists."""
    if spec.mode == "pairwise":
        return DirectPairwiseJudge(spec, orders=orders, decision=decision, tie_band=tie_band)
    return DirectPointwiseJudge(spec, decision=decision)
