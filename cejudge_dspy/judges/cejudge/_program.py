"""What both CE-Judge programs share: the stages, translation, and the understanding of one response.

Stage attributes (`concepts`, `translate`, `checklist_r2i`, `checklist_i2r`, and the judges' `judge`)
key the saved program JSON: keep their names. No LM lives here: choose it with `dspy.context(lm=...)`.

The ablations of the paper's design are options here (defaults: the method as designed); each removes
exactly one thing, and the stages it makes useless are not called:
- `concepts=False`: no concepts stage; both checklist directions receive an empty concepts list.
- `directions="r2i"` or `"i2r"`: only that checklist direction is written; the judgment sees its
  questions only. The other direction's inputs (its concepts, its English text) are not computed.
- `judge_on="translated"`: the judgment reads the English texts the checklists were written from
  (languages given as English) instead of the originals; its instruction is unchanged.
- without translation is the translator `none`: the checklists are written from the original texts.
- `answers=True` (pointwise judge only): the judgment writes its answers to the checklist first, as the
  paper's does (default: it reads the checklist and answers it for itself).
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import dspy

from cejudge_dspy.data import is_english, language_name
from cejudge_dspy.errors import TaskError
from cejudge_dspy.judges._machinery._saved_programs import for_task
from cejudge_dspy.judges._machinery._shared_work import SharedWork
from cejudge_dspy.judges._machinery._stage import StageFailure
from cejudge_dspy.judges._machinery._sync_bridge import run_sync
from cejudge_dspy.judges._option_choices import Directions, JudgeOn, checked
from cejudge_dspy.judges.cejudge._stages import (
    ChecklistFromInstruction,
    ChecklistFromResponse,
    Concepts,
    LinguisticConcepts,
    Translate,
)
from cejudge_dspy.judges.cejudge._understanding import Understanding
from cejudge_dspy.judges.verdicts import unparsed
from cejudge_dspy.tasks import TaskSpec, load_task
from cejudge_dspy.translate import Translator, make_translator
from cejudge_dspy.usage import about


class CEJudgeProgram(dspy.Module):
    """The stages and the shared-work plumbing both judges use."""

    mode: Literal["pointwise", "pairwise"]

    def __init__(
        self,
        task: str | TaskSpec,
        translator: str | Translator = "llm",
        *,
        concepts: bool = True,
        directions: Directions = "both",
        judge_on: JudgeOn = "original",
    ) -> None:
        super().__init__()
        self.spec = load_task(task)
        if self.spec.mode != self.mode:
            raise TaskError(f"task '{self.spec.name}' is {self.spec.mode}; use the {self.spec.mode} judge")
        self.use_concepts = bool(concepts)
        self.directions = checked("directions", directions)
        self.judge_on = checked("judge_on", judge_on)
        self.concepts = LinguisticConcepts() if self.spec.concepts == "linguistic" else Concepts()
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

    @property
    def _r2i(self) -> bool:
        return self.directions in ("both", "r2i")

    @property
    def _i2r(self) -> bool:
        return self.directions in ("both", "i2r")

    def _needs(self) -> dict[str, bool]:
        """Which first-stage results `_understand` computes: the response->instruction checklist reads the
        instruction's concepts and the response's English, the reverse the other two; judging the
        translated texts needs both English texts."""
        translated = self.judge_on == "translated"
        return {
            "instruction_concepts": self.use_concepts and self._r2i,
            "response_concepts": self.use_concepts and self._i2r,
            "instruction_english": self._i2r or translated,
            "response_english": self._r2i or translated,
        }

    def _calls_to_understand(self, language: str, response_language: str) -> int:
        """LM calls `_understand` asks for: the concepts and English texts the checklists need, and the
        checklists (a request served by shared work is subtracted as it happens; see `usage.note_reused`)."""
        needs = self._needs()
        llm_translates = self.translator is None
        translations = sum(
            llm_translates and needed and not is_english(lang)
            for needed, lang in (
                (needs["instruction_english"], language),
                (needs["response_english"], response_language),
            )
        )
        concepts = needs["instruction_concepts"] + needs["response_concepts"]
        return concepts + translations + self._r2i + self._i2r

    async def _understand(
        self, instruction: str, response: str, language: str, response_language: str, which: str
    ) -> Understanding:
        """Concepts of the original texts and their English, then the response's checklists (both
        directions unless an ablation says otherwise; see the module docstring).

        Shared work makes the instruction's half run once however many responses ask for it. `which`
        names the response in progress messages.
        """
        needs = self._needs()

        async def none() -> list[str]:
            return []

        async def same(text: str) -> str:
            return text

        # Each checklist starts as soon as its own two inputs are in, not when the slowest first-stage
        # call ends: a server with free slots then reads its prompt beside the calls still decoding.
        ic_, it_, rc_, rt_ = (
            asyncio.ensure_future(stage)
            for stage in (
                about("instruction", self._concepts(instruction, "instruction"))
                if needs["instruction_concepts"]
                else none(),
                about("instruction", self._english(instruction, language))
                if needs["instruction_english"]
                else same(instruction),
                about(which, self._concepts(response, "response")) if needs["response_concepts"] else none(),
                about(which, self._english(response, response_language))
                if needs["response_english"]
                else same(response),
            )
        )
        for first in (ic_, it_, rc_, rt_):  # a failure is raised once, through gather; never "not retrieved"
            first.add_done_callback(lambda done: done.cancelled() or done.exception())

        async def r2i() -> list[str]:
            concepts, english = await asyncio.gather(ic_, rt_)
            pred = await about(
                which,
                self._shared(
                    "checklist_r2i",
                    self.checklist_r2i,
                    task=self.spec.task,
                    instruction_concepts=concepts,
                    response=english,
                ),
            )
            return pred.checklist

        async def i2r() -> list[str]:
            english, concepts = await asyncio.gather(it_, rc_)
            pred = await about(
                which,
                self._shared(
                    "checklist_i2r",
                    self.checklist_i2r,
                    task=self.spec.task,
                    instruction=english,
                    response_concepts=concepts,
                ),
            )
            return pred.checklist

        from_response, from_instruction = await asyncio.gather(
            r2i() if self._r2i else none(), i2r() if self._i2r else none()
        )
        ic, it, rc, rt = await asyncio.gather(ic_, it_, rc_, rt_)
        return Understanding(instruction, response, ic, it, rc, rt, from_response, from_instruction)

    def _shown(self, seen: Understanding, language: str, response_language: str) -> dict[str, str]:
        """The texts the judgment reads and their languages: the originals, or with
        `judge_on="translated"` the English texts the checklists were written from."""
        if self.judge_on == "original":
            return {
                "instruction": seen.instruction,
                "response": seen.response,
                "source_language": language_name(language),
                "response_language": language_name(response_language),
            }
        return {
            "instruction": seen.instruction_english,
            "response": seen.english,
            "source_language": _shown_language(seen.instruction, seen.instruction_english, language),
            "response_language": _shown_language(seen.response, seen.english, response_language),
        }

    def forward(self, **kwargs: Any) -> dspy.Prediction:
        return run_sync(self.aforward(**kwargs))


def _shown_language(original: str, shown: str, language: str) -> str:
    """English for a text that was translated; its own language for one passed through untouched."""
    return "English" if shown != original or is_english(language) else language_name(language)


def unparsed_prediction(
    mode: Literal["pointwise", "pairwise"], failure: StageFailure, **found: Any
) -> dspy.Prediction:
    """The record of an item whose stage could not be read even after its retry, with what was found."""
    return unparsed(mode, failure.stage, failure.reason, failure.raw, **found).to_prediction()
