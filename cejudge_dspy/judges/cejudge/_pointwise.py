"""CE-Judge's pointwise judge: a score on the task's scale for one response (e.g. a literary translation).

concepts and English translations -> both checklists -> the judgment on the untranslated texts, after the
checks that decide without an LLM judgment (_checks.py). For an item whose response is in another language
than its source (a translation), the judge first translates the source itself, and the judgment reads that
reference beside the response (`reference=False` turns it off); the record keeps it under
`details["reference"]`, with the stage that wrote it. Into English, that reference is the source's English
translation of stage 2 (one call serves both); into another language, the `reference` stage writes it.
The judgment reads the checklist and answers it for itself; `answers=True` has it write its answers
first, the paper's step (once the default; on the embedded backbone the answers were the checklist's
questions copied back, most of the judgment's tokens, and the scores are the same without them;
docs/measurements/embedded-obvious-items.md).
"""

from __future__ import annotations

import asyncio

import dspy

from cejudge_dspy.data import is_english, language_name, normalize_language, require_text
from cejudge_dspy.errors import known_keywords
from cejudge_dspy.judges._machinery._probability_readings import check_decision, score_probabilities
from cejudge_dspy.judges._machinery._stage import StageFailure
from cejudge_dspy.judges.cejudge._checks import translation_checks
from cejudge_dspy.judges.cejudge._program import CEJudgeProgram, Directions, JudgeOn
from cejudge_dspy.judges.cejudge._program import unparsed_prediction as _unparsed
from cejudge_dspy.judges.cejudge._stages import (
    ReferenceTranslation,
    ScoreJudgment,
    ScoreUnanswered,
    ScoreWithReference,
    ScoreWithReferenceUnanswered,
)
from cejudge_dspy.judges.cejudge._understanding import Understanding, findings
from cejudge_dspy.judges.verdicts import Decision, JudgeResult, decide
from cejudge_dspy.tasks import TaskSpec
from cejudge_dspy.translate import Translator
from cejudge_dspy.usage import Usage, collecting


class PointwiseJudge(CEJudgeProgram):
    """Score one response (e.g. a literary translation of a source passage) on the task's scale."""

    mode = "pointwise"

    @known_keywords
    def __init__(
        self,
        task: str | TaskSpec = "literary",
        translator: str | Translator = "llm",
        decision: Decision = "probability",
        language_check: bool = True,
        likelihood_check: bool = True,
        reference: bool = True,
        answers: bool = False,
        concepts: bool = True,
        directions: Directions = "both",
        judge_on: JudgeOn = "original",
    ) -> None:
        super().__init__(task, translator, concepts=concepts, directions=directions, judge_on=judge_on)
        self.decision = check_decision(decision)
        # Each only for tasks that declare it (check_response_language, check_translation_likelihood;
        # see _checks.py); False runs the LLM judgment on every item.
        self.language_check = language_check
        self.likelihood_check = likelihood_check
        # `answers=True`: the judgment writes its checklist answers first (the paper's judgment).
        # Same attribute names, other fields: a saved program of the other kind does not load
        # (judges/_machinery/_saved_programs.py).
        self.answers = bool(answers)
        self.judge = ScoreJudgment() if self.answers else ScoreUnanswered()
        # The judge's own translation of the source, read beside the response: on the embedded 1.5B
        # backbone it tells a fluent translation that says something else from a faithful one
        # (docs/measurements/embedded-obvious-items.md).
        self.reference = ReferenceTranslation() if reference else None
        with_reference = ScoreWithReference if self.answers else ScoreWithReferenceUnanswered
        self.judge_with_reference = with_reference() if reference else None

    async def aforward(
        self, instruction: str, response: str, language: str = "en", response_language: str | None = None
    ) -> dspy.Prediction:
        instruction = require_text(instruction, "instruction")
        response = require_text(response, "response")
        language = normalize_language(language)
        response_language = normalize_language(response_language) if response_language else language
        usage = Usage()
        decided, checked = await translation_checks(
            self.spec,
            instruction=instruction,
            response=response,
            language=language,
            response_language=response_language,
            usage=usage,
            language_check=self.language_check,
            likelihood_check=self.likelihood_check,
        )
        if decided is not None:
            return decide(decided, self.decision).to_prediction()
        expected = self._calls_to_understand(language, response_language) + 1
        expected += self._writes_reference(language, response_language)
        with collecting(usage, expected_calls=expected):
            try:
                seen, reference = await asyncio.gather(
                    self._understand(instruction, response, language, response_language, "response"),
                    self._reference(instruction, language, response_language),
                )
            except StageFailure as failure:
                return _unparsed("pointwise", failure, usage=usage)
            found = findings(usage, response=seen)
            if reference:
                checked = {**checked, "reference": reference}
            try:
                pred = await self._score(seen, language, response_language, reference)
            except StageFailure as failure:
                return _unparsed("pointwise", failure, **found, details=checked)
        result = JudgeResult(
            mode="pointwise",
            status="ok",
            score=pred.score,
            feedback=pred.feedback,
            answers=list(getattr(pred, "answers", None) or []),
            probabilities=score_probabilities(pred, sorted(self.spec.scale)),
            details=checked,
            **found,
        )
        return decide(result, self.decision).to_prediction()

    def _writes_reference(self, language: str, response_language: str) -> bool:
        """A reference translation only for a translation (the response in another language than the
        source), and not under judge_on="translated", whose judgment reads both texts in English."""
        return self.reference is not None and self.judge_on == "original" and response_language != language

    async def _reference(self, source: str, language: str, response_language: str) -> dict[str, str | None]:
        """The judge's own translation of the source (`reference=True`); {} when there is none to write (see
        `_writes_reference`). One that cannot be parsed is recorded with its reason, and the judgment is
        made without it."""
        if self.reference is None or not self._writes_reference(language, response_language):
            return {}
        if is_english(response_language) and self.translator is None:
            # A translation into English: the judge's own translation of the source is the English text
            # stage 2 writes for the checklists (one shared call, the same request), not a second call.
            try:
                return {"answer": await self._english(source, language), "error": None, "stage": "translate"}
            except StageFailure as failure:
                return {"answer": None, "error": failure.reason, "stage": "translate"}
        try:
            # Shared like the source's concepts: several translations of one source need one reference.
            pred = await self._shared(
                "reference translation",
                self.reference,
                source_language=language_name(language),
                target_language=language_name(response_language),
                text=source,
            )
        except StageFailure as failure:
            return {"answer": None, "error": failure.reason, "stage": "reference translation"}
        return {"answer": pred.translation, "error": None, "stage": "reference translation"}

    async def _score(
        self, seen: Understanding, language: str, response_language: str, reference: dict[str, str | None]
    ) -> dspy.Prediction:
        """The judgment on the untranslated texts (or, ablated, the English ones) with the checklist (and the
        judge's own translation, when it wrote one)."""
        inputs = {
            "task": self.spec.task,
            "criteria": self.spec.criteria,
            "scale": self.spec.scale,
            "checklist": seen.checklist,
            **self._shown(seen, language, response_language),
        }
        if self.judge_with_reference is not None and reference.get("answer") is not None:
            return await self.judge_with_reference.acall(reference=reference["answer"], **inputs)
        return await self.judge.acall(**inputs)
