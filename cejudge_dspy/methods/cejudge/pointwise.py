"""CE-Judge's pointwise judge: a score on the task's scale for one response (e.g. a literary translation).

concepts and English translations -> both checklists -> the judgment on the untranslated texts, after the
checks that decide without an LLM judgment (checks.py).
"""

from __future__ import annotations

from typing import Any

import dspy

from cejudge_dspy.items import require_text
from cejudge_dspy.languages import normalize_language
from cejudge_dspy.methods.cejudge.checks import translation_checks
from cejudge_dspy.methods.cejudge.program import CEJudgeProgram
from cejudge_dspy.methods.cejudge.program import unparsed_prediction as _unparsed
from cejudge_dspy.methods.cejudge.stages import ScoreJudgment
from cejudge_dspy.methods.cejudge.understanding import Understanding, findings
from cejudge_dspy.methods.readings import check_decision, score_probabilities
from cejudge_dspy.methods.stages import StageFailure
from cejudge_dspy.results import Decision, JudgeResult, decide
from cejudge_dspy.tasks import TaskSpec
from cejudge_dspy.translate.translators import Translator
from cejudge_dspy.usage import Usage, collecting


class PointwiseJudge(CEJudgeProgram):
    """Score one response (e.g. a literary translation of a source passage) on the task's scale."""

    mode = "pointwise"

    def __init__(
        self,
        task: str | TaskSpec = "literary",
        translator: str | Translator = "llm",
        decision: Decision = "probability",
        language_check: bool = True,
        likelihood_check: bool = True,
        **ablations: Any,
    ) -> None:
        super().__init__(task, translator, **ablations)
        self.decision = check_decision(decision)
        # Each only for tasks that declare it (check_response_language, check_translation_likelihood;
        # see checks.py); False runs the LLM judgment on every item.
        self.language_check = language_check
        self.likelihood_check = likelihood_check
        self.judge = ScoreJudgment()

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
        with collecting(usage, expected_calls=expected):
            try:
                seen = await self._understand(instruction, response, language, response_language, "response")
            except StageFailure as failure:
                return _unparsed("pointwise", failure, usage=usage)
            found = findings(usage, response=seen)
            try:
                pred = await self._score(seen, language, response_language)
            except StageFailure as failure:
                return _unparsed("pointwise", failure, **found)
        result = JudgeResult(
            mode="pointwise",
            status="ok",
            score=pred.score,
            feedback=pred.feedback,
            answers=list(pred.answers),
            probabilities=score_probabilities(pred, sorted(self.spec.scale)),
            details=checked,
            **found,
        )
        return decide(result, self.decision).to_prediction()

    async def _score(self, seen: Understanding, language: str, response_language: str) -> dspy.Prediction:
        """The judgment on the untranslated texts (or, ablated, the English ones) with the checklist."""
        return await self.judge.acall(
            task=self.spec.task,
            criteria=self.spec.criteria,
            scale=self.spec.scale,
            checklist=seen.checklist,
            **self._shown(seen, language, response_language),
        )
