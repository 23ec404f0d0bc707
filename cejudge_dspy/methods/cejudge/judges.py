"""CE-Judge programs: `PointwiseJudge` (a score on the task's scale) and `PairwiseJudge` (A or B).

One item's journey, as the method prescribes:
  concepts of the original texts | English translations          (all at once)
  -> checklist response->instruction | instruction->response      (per response, all at once)
  -> judgment on the untranslated texts plus the concatenated checklist(s)
The stages and the understanding of one response live in program.py; the record fields filled from
it in understanding.py.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import dspy

from cejudge_dspy.errors import InputError
from cejudge_dspy.items import require_text
from cejudge_dspy.languages import normalize_language
from cejudge_dspy.methods.cejudge.program import CEJudgeProgram
from cejudge_dspy.methods.cejudge.stages import ScoreJudgment, VerdictJudgment
from cejudge_dspy.methods.cejudge.understanding import Understanding, findings
from cejudge_dspy.methods.readings import (
    check_decision,
    check_tie_band,
    pairwise_probabilities,
    score_probabilities,
)
from cejudge_dspy.methods.stages import StageFailure, judge_order
from cejudge_dspy.probabilities import DEFAULT_TIE_BAND
from cejudge_dspy.results import Decision, JudgeResult, OrderResult, decide, reconcile, unparsed
from cejudge_dspy.tasks import TaskSpec
from cejudge_dspy.translate.translators import Translator
from cejudge_dspy.usage import Usage, about, collecting


class PointwiseJudge(CEJudgeProgram):
    """Score one response (e.g. a literary translation of a source passage) on the task's scale."""

    mode = "pointwise"

    def __init__(
        self,
        task: str | TaskSpec = "literary",
        translator: str | Translator = "llm",
        decision: Decision = "probability",
    ) -> None:
        super().__init__(task, translator)
        self.decision = check_decision(decision)
        self.judge = ScoreJudgment()

    async def aforward(
        self, instruction: str, response: str, language: str = "en", response_language: str | None = None
    ) -> dspy.Prediction:
        instruction = require_text(instruction, "instruction")
        response = require_text(response, "response")
        language = normalize_language(language)
        response_language = normalize_language(response_language) if response_language else language
        usage = Usage()
        expected = self._calls_to_understand(language, response_language) + 1
        with collecting(usage, expected_calls=expected):
            try:
                seen = await self._understand(instruction, response, language, response_language, "response")
            except StageFailure as failure:
                return _unparsed("pointwise", failure, usage=usage)
            found = findings(usage, response=seen)
            try:
                pred = await self._score(seen)
            except StageFailure as failure:
                return _unparsed("pointwise", failure, **found)
        result = JudgeResult(
            mode="pointwise",
            status="ok",
            score=pred.score,
            feedback=pred.feedback,
            answers=list(pred.answers),
            probabilities=score_probabilities(pred, sorted(self.spec.scale)),
            **found,
        )
        return decide(result, self.decision).to_prediction()

    async def _score(self, seen: Understanding) -> dspy.Prediction:
        """The judgment on the untranslated texts with the response's checklist."""
        return await self.judge.acall(
            task=self.spec.task,
            criteria=self.spec.criteria,
            scale=self.spec.scale,
            instruction=seen.instruction,
            response=seen.response,
            checklist=seen.checklist,
        )


class PairwiseJudge(CEJudgeProgram):
    """Pick the better of two responses; by default judged in both orders and reconciled."""

    mode = "pairwise"

    def __init__(
        self,
        task: str | TaskSpec = "chat",
        translator: str | Translator = "llm",
        orders: Literal["both", "single"] = "both",
        decision: Decision = "probability",
        tie_band: float = DEFAULT_TIE_BAND,
    ) -> None:
        super().__init__(task, translator)
        if orders not in ("both", "single"):
            raise InputError(f"orders must be 'both' or 'single', got {orders!r}", field="orders")
        self.orders = orders
        self.decision = check_decision(decision)
        self.tie_band = check_tie_band(tie_band)
        self.judge = VerdictJudgment()

    async def aforward(
        self, instruction: str, response_a: str, response_b: str, language: str = "en"
    ) -> dspy.Prediction:
        instruction = require_text(instruction, "instruction")
        a, b = require_text(response_a, "response_a"), require_text(response_b, "response_b")
        language = normalize_language(language)
        usage = Usage()
        # Both responses ask for the instruction's concepts and English; the second request is shared.
        expected = 2 * self._calls_to_understand(language, language) + (2 if self.orders == "both" else 1)
        with collecting(usage, expected_calls=expected):
            try:
                # Each response's checklists start as soon as its own concepts and translation are in.
                seen_a, seen_b = await asyncio.gather(
                    self._understand(instruction, a, language, language, "A"),
                    self._understand(instruction, b, language, language, "B"),
                )
            except StageFailure as failure:
                return _unparsed("pairwise", failure, usage=usage)
            found = findings(usage, a=seen_a, b=seen_b)
            # The swapped order reuses the checklists: only the judgment is repeated.
            plan = [("AB", seen_a, seen_b)] + ([("BA", seen_b, seen_a)] if self.orders == "both" else [])
            orders = list(await asyncio.gather(*(self._judge_order(*p) for p in plan)))
        verdict, consistent = reconcile(orders)
        if verdict is None:
            failed = next(o for o in orders if o.verdict is None)
            reason = f"order {failed.order}: {failed.error}"
            return unparsed(
                "pairwise", "VerdictJudgment", reason, failed.raw, orders=orders, **found
            ).to_prediction()
        result = JudgeResult(
            mode="pairwise",
            status="ok",
            verdict=verdict,
            consistent=consistent,
            feedback=orders[0].feedback,
            answers=orders[0].answers,
            orders=orders,
            probabilities=pairwise_probabilities(orders, self.tie_band),
            **found,
        )
        return decide(result, self.decision).to_prediction()

    async def _judge_order(
        self, order: Literal["AB", "BA"], first: Understanding, second: Understanding
    ) -> OrderResult:
        """The judgment on the untranslated texts as shown (`first` as A), with each one's checklist."""
        return await about(
            shown_first(order),
            judge_order(
                self.judge,
                order,
                task=self.spec.task,
                criteria=self.spec.criteria,
                instruction=first.instruction,
                response_a=first.response,
                response_b=second.response,
                checklist_a=first.checklist,
                checklist_b=second.checklist,
            ),
        )


def shown_first(order: Literal["AB", "BA"]) -> str:
    """What a presentation order is called in progress messages: `A shown first`, `B shown first`."""
    return f"{order[0]} shown first"


def _unparsed(mode: Literal["pointwise", "pairwise"], failure: StageFailure, **found: Any) -> dspy.Prediction:
    return unparsed(mode, failure.stage, failure.reason, failure.raw, **found).to_prediction()


def cejudge_program(
    spec: TaskSpec,
    translator: str = "llm",
    orders: Literal["both", "single"] = "both",
    decision: Decision = "probability",
    tie_band: float = DEFAULT_TIE_BAND,
    **_: Any,
) -> dspy.Module:
    """The `cejudge` method: the task's pairwise or pointwise CE-Judge."""
    if spec.mode == "pairwise":
        return PairwiseJudge(spec, translator=translator, orders=orders, decision=decision, tie_band=tie_band)
    return PointwiseJudge(spec, translator=translator, decision=decision)
