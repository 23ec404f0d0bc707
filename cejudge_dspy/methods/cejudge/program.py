"""What both CE-Judge programs share: the stages, translation, and the understanding of one response.

Stage attributes (`concepts`, `translate`, `checklist_r2i`, `checklist_i2r`, and the judges' `judge`)
key the saved program JSON: keep their names. No LM lives here: choose it with `dspy.context(lm=...)`.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import dspy

from cejudge_dspy.errors import TaskError
from cejudge_dspy.languages import is_english, language_name
from cejudge_dspy.methods.cejudge.stages import (
    ChecklistFromInstruction,
    ChecklistFromResponse,
    Concepts,
    Translate,
)
from cejudge_dspy.methods.cejudge.understanding import Understanding
from cejudge_dspy.methods.saved import for_task
from cejudge_dspy.methods.shared import SharedWork
from cejudge_dspy.sync import run_sync
from cejudge_dspy.tasks import TaskSpec, load_task
from cejudge_dspy.translate.translators import Translator, make_translator
from cejudge_dspy.usage import about


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
        return Understanding(instruction, response, ic, it, rc, rt, r2i.checklist, i2r.checklist)

    def forward(self, **kwargs: Any) -> dspy.Prediction:
        return run_sync(self.aforward(**kwargs))
