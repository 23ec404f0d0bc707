"""The paper's CE-Judge pipeline as a baseline: every stage call awaited one after another, nothing shared.

Same stage modules (so the same prompts and token counts) as `cejudge_dspy.methods.cejudge`, but in
the form the paper's code runs them: concepts, then translations, then checklists, then one judgment,
each call waiting for the previous one; no work shared between responses or items; one presentation
order. Choice, following the issue's counts (7 calls per pointwise item, 11 per pairwise item): every
text is translated, English included, as the paper's code does; `cejudge_dspy` skips English instead.
"""

from __future__ import annotations

from typing import Any

import dspy

from cejudge_dspy.languages import language_name, normalize_language
from cejudge_dspy.methods import StageFailure
from cejudge_dspy.methods.cejudge.stages import (
    ChecklistFromInstruction,
    ChecklistFromResponse,
    Concepts,
    ScoreJudgment,
    Translate,
    VerdictJudgment,
)
from cejudge_dspy.results import JudgeResult, OrderResult, unparsed
from cejudge_dspy.tasks import TaskSpec, load_task
from cejudge_dspy.usage import Usage, collecting


class _Paper(dspy.Module):
    def __init__(self, task: str | TaskSpec) -> None:
        super().__init__()
        self.spec = load_task(task)
        self.concepts = Concepts()
        self.translate = Translate()
        self.checklist_r2i = ChecklistFromResponse()
        self.checklist_i2r = ChecklistFromInstruction()

    async def _sequential_front(self, texts: dict[str, tuple[str, str, str]]) -> tuple[dict, dict]:
        """Concepts of every text, then the translation of every text, one call at a time."""
        concepts: dict[str, list[str]] = {}
        english: dict[str, str] = {}
        for name, (text, kind, _) in texts.items():
            concepts[name] = (await self.concepts.acall(task=self.spec.task, kind=kind, text=text)).concepts
        for name, (text, _, language) in texts.items():
            pred = await self.translate.acall(source_language=language_name(language), text=text)
            english[name] = pred.english
        return concepts, english

    async def _checklist(
        self,
        instruction_concepts: list[str],
        response_concepts: list[str],
        english_instruction: str,
        english_response: str,
    ) -> list[str]:
        r2i = await self.checklist_r2i.acall(
            task=self.spec.task, instruction_concepts=instruction_concepts, response=english_response
        )
        i2r = await self.checklist_i2r.acall(
            task=self.spec.task, instruction=english_instruction, response_concepts=response_concepts
        )
        return r2i.checklist + i2r.checklist


class PaperPointwise(_Paper):
    """7 calls per item: 2 concepts, 2 translations, 2 checklists, 1 score."""

    def __init__(self, task: str | TaskSpec = "literary") -> None:
        super().__init__(task)
        self.judge = ScoreJudgment()

    async def aforward(
        self, instruction: str, response: str, language: str = "en", response_language: str | None = None
    ) -> dspy.Prediction:
        language = normalize_language(language)
        response_language = normalize_language(response_language) if response_language else language
        usage = Usage()
        with collecting(usage):
            try:
                c, e = await self._sequential_front(
                    {
                        "instruction": (instruction, "instruction", language),
                        "response": (response, "response", response_language),
                    }
                )
                checklist = await self._checklist(
                    c["instruction"], c["response"], e["instruction"], e["response"]
                )
                pred = await self.judge.acall(
                    task=self.spec.task,
                    criteria=self.spec.criteria,
                    scale=self.spec.scale,
                    instruction=instruction,
                    response=response,
                    checklist=checklist,
                )
            except StageFailure as failure:
                failed = unparsed("pointwise", failure.stage, failure.reason, failure.raw, usage=usage)
                return failed.to_prediction()
        return JudgeResult(
            mode="pointwise",
            status="ok",
            method="paper",
            score=pred.score,
            feedback=pred.feedback,
            checklists={"response": checklist},
            usage=usage,
        ).to_prediction()


class PaperPairwise(_Paper):
    """11 calls per item: 3 concepts, 3 translations, 4 checklists, 1 verdict (order A/B only)."""

    def __init__(self, task: str | TaskSpec = "chat") -> None:
        super().__init__(task)
        self.judge = VerdictJudgment()

    async def aforward(
        self, instruction: str, response_a: str, response_b: str, language: str = "en", **_: Any
    ) -> dspy.Prediction:
        language = normalize_language(language)
        usage = Usage()
        with collecting(usage):
            try:
                c, e = await self._sequential_front(
                    {
                        "instruction": (instruction, "instruction", language),
                        "a": (response_a, "response", language),
                        "b": (response_b, "response", language),
                    }
                )
                ca = await self._checklist(c["instruction"], c["a"], e["instruction"], e["a"])
                cb = await self._checklist(c["instruction"], c["b"], e["instruction"], e["b"])
                pred = await self.judge.acall(
                    task=self.spec.task,
                    criteria=self.spec.criteria,
                    instruction=instruction,
                    response_a=response_a,
                    response_b=response_b,
                    checklist_a=ca,
                    checklist_b=cb,
                )
            except StageFailure as failure:
                failed = unparsed("pairwise", failure.stage, failure.reason, failure.raw, usage=usage)
                return failed.to_prediction()
        order = OrderResult(
            order="AB", verdict=pred.verdict, shown_verdict=pred.verdict, feedback=pred.feedback
        )
        return JudgeResult(
            mode="pairwise",
            status="ok",
            method="paper",
            verdict=pred.verdict,
            orders=[order],
            feedback=pred.feedback,
            checklists={"a": ca, "b": cb},
            usage=usage,
        ).to_prediction()
