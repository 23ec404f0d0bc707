"""CE-Judge programs: `PointwiseJudge` (a score on the task's scale) and `PairwiseJudge` (A or B).

One item's journey, as the method prescribes:
  concepts of the original texts | English translations          (all at once)
  -> checklist response->instruction | instruction->response      (per response, all at once)
  -> judgment on the untranslated texts plus the concatenated checklist(s)
Stage attributes (`concepts`, `translate`, `checklist_r2i`, `checklist_i2r`, `judge`) key the saved
program JSON: keep their names. No LM lives here: choose it with `dspy.context(lm=...)`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

import dspy

from cejudge_dspy.errors import InputError, TaskError
from cejudge_dspy.items import require_text
from cejudge_dspy.languages import is_english, language_name, normalize_language
from cejudge_dspy.methods.cejudge.stages import (
    ChecklistFromInstruction,
    ChecklistFromResponse,
    Concepts,
    ScoreJudgment,
    Translate,
    VerdictJudgment,
)
from cejudge_dspy.methods.saved import for_task
from cejudge_dspy.methods.shared import SharedWork
from cejudge_dspy.methods.stages import StageFailure, judge_order
from cejudge_dspy.results import JudgeResult, OrderResult, reconcile, unparsed
from cejudge_dspy.sync import run_sync
from cejudge_dspy.tasks import TaskSpec, load_task
from cejudge_dspy.translate.translators import Translator, make_translator
from cejudge_dspy.usage import Usage, about, collecting


@dataclass(frozen=True)
class Understanding:
    """What the first two stages learned about one response (and its instruction)."""

    instruction_concepts: list[str]
    instruction_english: str
    concepts: list[str]
    english: str
    response_to_instruction: list[str]
    instruction_to_response: list[str]

    @property
    def checklist(self) -> list[str]:
        """The concatenated checklist the judgment sees: response->instruction, then the reverse."""
        return self.response_to_instruction + self.instruction_to_response

    @property
    def checklist_parts(self) -> dict[str, list[str]]:
        return {
            "response_to_instruction": self.response_to_instruction,
            "instruction_to_response": self.instruction_to_response,
        }


class CEJudgeProgram(dspy.Module):
    """The stages and the shared-work plumbing both judges use."""

    mode: Literal["pointwise", "pairwise"]

    def __init__(self, task: str | TaskSpec, translator: str | Translator = "llm") -> None:
        super().__init__()
        self.spec = load_task(task)
        if self.spec.mode != self.mode:
            raise TaskError(f"task '{self.spec.name}' is {self.spec.mode}; use the {self.spec.mode} judge")
        self.concepts = Concepts()
        self.translate = Translate()
        self.checklist_r2i = ChecklistFromResponse()
        self.checklist_i2r = ChecklistFromInstruction()
        # "llm" goes through the `translate` stage above (tunable, shared, cached per LM);
        # other translators are external services behind the Translator protocol.
        self.translator = (
            None
            if translator == "llm"
            else (translator if not isinstance(translator, str) else make_translator(translator))
        )
        self.shared = SharedWork()

    @classmethod
    def for_task(cls, task: str | TaskSpec, program: str = "auto", **options: Any) -> CEJudgeProgram:
        """The task's tuned program from optimized/ when one exists ("auto"), the hand-written one
        ("base"), or a saved program at a path; the manifest is checked before loading."""
        return for_task(cls, task, program, **options)

    async def _shared(self, name: str, stage: dspy.Module, **inputs: Any) -> dspy.Prediction:
        return await self.shared.get(name, stage, inputs, lambda: stage.acall(**inputs))

    async def _concepts(self, text: str, kind: str) -> list[str]:
        pred = await self._shared("concepts", self.concepts, task=self.spec.task, kind=kind, text=text)
        return pred.concepts

    async def _english(self, text: str, language: str) -> str:
        if is_english(language):
            return text  # English is never translated
        if self.translator is not None:
            return await self.translator.translate(text, language)
        pred = await self._shared(
            "translate", self.translate, source_language=language_name(language), text=text
        )
        return pred.english

    def _calls_to_understand(self, language: str, response_language: str) -> int:
        """LM calls `_understand` asks for: concepts and English of both texts, and two checklists
        (a request served by shared work is subtracted as it happens; see `usage.note_reused`)."""
        llm_translates = self.translator is None
        translations = sum(llm_translates and not is_english(lang) for lang in (language, response_language))
        return 2 + translations + 2

    async def _understand(
        self, instruction: str, response: str, language: str, response_language: str, which: str
    ) -> Understanding:
        """Concepts of the original texts and their English, then the response's two checklists.

        Shared work makes the instruction's half run once however many responses ask for it. `which`
        names the response in progress messages.
        """
        ic, it, rc, rt = await asyncio.gather(
            about("instruction", self._concepts(instruction, "instruction")),
            about("instruction", self._english(instruction, language)),
            about(which, self._concepts(response, "response")),
            about(which, self._english(response, response_language)),
        )
        r2i, i2r = await asyncio.gather(
            about(
                which,
                self._shared(
                    "checklist_r2i",
                    self.checklist_r2i,
                    task=self.spec.task,
                    instruction_concepts=ic,
                    response=rt,
                ),
            ),
            about(
                which,
                self._shared(
                    "checklist_i2r",
                    self.checklist_i2r,
                    task=self.spec.task,
                    instruction=it,
                    response_concepts=rc,
                ),
            ),
        )
        return Understanding(ic, it, rc, rt, r2i.checklist, i2r.checklist)

    def forward(self, **kwargs: Any) -> dspy.Prediction:
        return run_sync(self.aforward(**kwargs))


class PointwiseJudge(CEJudgeProgram):
    """Score one response (e.g. a literary translation of a source passage) on the task's scale."""

    mode = "pointwise"

    def __init__(self, task: str | TaskSpec = "literary", translator: str | Translator = "llm") -> None:
        super().__init__(task, translator)
        self.judge = ScoreJudgment()

    async def aforward(
        self, instruction: str, response: str, language: str = "en", response_language: str | None = None
    ) -> dspy.Prediction:
        instruction = require_text(instruction, "instruction")
        response = require_text(response, "response")
        language = normalize_language(language)
        response_language = normalize_language(response_language) if response_language else language
        usage = Usage()
        found: dict[str, Any] = {"usage": usage}
        expected = self._calls_to_understand(language, response_language) + 1
        with collecting(usage, expected_calls=expected):
            try:
                seen = await self._understand(instruction, response, language, response_language, "response")
                found["concepts"] = {"instruction": seen.instruction_concepts, "response": seen.concepts}
                found["translations"] = translated_only(
                    instruction=(instruction, seen.instruction_english), response=(response, seen.english)
                )
                found["checklist_parts"] = {"response": seen.checklist_parts}
                found["checklists"] = {"response": seen.checklist}
                pred = await self.judge.acall(
                    task=self.spec.task,
                    criteria=self.spec.criteria,
                    scale=self.spec.scale,
                    instruction=instruction,
                    response=response,
                    checklist=seen.checklist,
                )
            except StageFailure as failure:
                return unparsed(
                    "pointwise", failure.stage, failure.reason, failure.raw, **found
                ).to_prediction()
        result = JudgeResult(
            mode="pointwise",
            status="ok",
            score=pred.score,
            feedback=pred.feedback,
            answers=list(pred.answers),
            **found,
        )
        return result.to_prediction()


class PairwiseJudge(CEJudgeProgram):
    """Pick the better of two responses; by default judged in both orders and reconciled."""

    mode = "pairwise"

    def __init__(
        self,
        task: str | TaskSpec = "chat",
        translator: str | Translator = "llm",
        orders: Literal["both", "single"] = "both",
    ) -> None:
        super().__init__(task, translator)
        if orders not in ("both", "single"):
            raise InputError(f"orders must be 'both' or 'single', got {orders!r}", field="orders")
        self.orders = orders
        self.judge = VerdictJudgment()

    async def aforward(
        self, instruction: str, response_a: str, response_b: str, language: str = "en"
    ) -> dspy.Prediction:
        instruction = require_text(instruction, "instruction")
        a, b = require_text(response_a, "response_a"), require_text(response_b, "response_b")
        language = normalize_language(language)
        usage = Usage()
        found: dict[str, Any] = {"usage": usage}
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
                return unparsed(
                    "pairwise", failure.stage, failure.reason, failure.raw, **found
                ).to_prediction()
            found["concepts"] = {
                "instruction": seen_a.instruction_concepts,
                "a": seen_a.concepts,
                "b": seen_b.concepts,
            }
            found["translations"] = translated_only(
                instruction=(instruction, seen_a.instruction_english),
                a=(a, seen_a.english),
                b=(b, seen_b.english),
            )
            found["checklist_parts"] = {"a": seen_a.checklist_parts, "b": seen_b.checklist_parts}
            ca, cb = seen_a.checklist, seen_b.checklist
            found["checklists"] = {"a": ca, "b": cb}
            # The swapped order reuses the checklists: only the judgment is repeated.
            plan = [("AB", a, b, ca, cb)] + ([("BA", b, a, cb, ca)] if self.orders == "both" else [])
            orders = list(await asyncio.gather(*(self._judge_order(instruction, *p) for p in plan)))
        verdict, consistent = reconcile(orders)
        if verdict is None:
            failed = next(o for o in orders if o.verdict is None)
            return unparsed(
                "pairwise",
                "VerdictJudgment",
                f"order {failed.order}: {failed.error}",
                failed.raw,
                orders=orders,
                **found,
            ).to_prediction()
        result = JudgeResult(
            mode="pairwise",
            status="ok",
            verdict=verdict,
            consistent=consistent,
            feedback=orders[0].feedback,
            answers=orders[0].answers,
            orders=orders,
            **found,
        )
        return result.to_prediction()

    async def _judge_order(
        self,
        instruction: str,
        order: Literal["AB", "BA"],
        first: str,
        second: str,
        checklist_first: list[str],
        checklist_second: list[str],
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
                checklist_a=checklist_first,
                checklist_b=checklist_second,
            ),
        )


def shown_first(order: Literal["AB", "BA"]) -> str:
    """What a presentation order is called in progress messages: `A shown first`, `B shown first`."""
    return f"{order[0]} shown first"


def translated_only(**pairs: tuple[str, str]) -> dict[str, str]:
    """Keep only the texts that were actually translated (English passes through untouched)."""
    return {name: english for name, (original, english) in pairs.items() if english != original}


def cejudge_program(
    spec: TaskSpec, translator: str = "llm", orders: Literal["both", "single"] = "both", **_: Any
) -> dspy.Module:
    """The `cejudge` method: the task's pairwise or pointwise CE-Judge."""
    if spec.mode == "pairwise":
        return PairwiseJudge(spec, translator=translator, orders=orders)
    return PointwiseJudge(spec, translator=translator)
