"""CE-Judge's stages: concepts, translation, the two checklist directions, the judgments and the
optional reference answer of the graded judgment.

Class names are what the stage does and appear in records (usage per stage, `error_stage`); the
attribute names the judges give them key the saved program JSON.
"""

from __future__ import annotations

from typing import Any

import dspy

from cejudge_dspy.judges._machinery._stage import Stage, clean_list
from cejudge_dspy.judges.cejudge import _signatures as sig


def stripped_text(pred: dspy.Prediction, field: str, what: str) -> dspy.Prediction:
    """A free-text output that must say something: stripped, or rejected as `empty <what>`."""
    value = getattr(pred, field)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"empty {what}")
    setattr(pred, field, value.strip())
    return pred


class Concepts(Stage):
    signature = sig.ExtractConcepts
    label = "concepts"
    max_concepts = 4
    max_tokens = 128  # measured: 27 output tokens on average

    def check(self, pred: dspy.Prediction, inputs: dict[str, Any]) -> dspy.Prediction:
        concepts = clean_list(pred.concepts, "concepts")
        # The method asks for 1-4; extra concepts from a verbose model are dropped, not failed.
        pred.concepts = concepts[: self.max_concepts]
        return pred


class LinguisticConcepts(Concepts):
    """The concepts stage of a task declared with `concepts = "linguistic"` (the paper's LitEval prompt).

    The paper asks for no number of linguistic concepts; a list is cut at `max_concepts` so that a
    looping small model cannot flood the checklist prompts."""

    signature = sig.ExtractLinguisticConcepts
    label = "linguistic concepts"
    max_concepts = 10
    max_tokens = 256


class Translate(Stage):
    signature = sig.TranslateToEnglish
    label = "translation to English"

    def check(self, pred: dspy.Prediction, inputs: dict[str, Any]) -> dspy.Prediction:
        return stripped_text(pred, "english", "translation")


class ChecklistFromResponse(Stage):
    """Response-to-instruction direction: the translated response plus the instruction's concepts."""

    signature = sig.ResponseToInstructionChecklist
    label = "checklist response→instruction"
    max_tokens = 384  # measured: about 100 output tokens for 3-6 questions

    def check(self, pred: dspy.Prediction, inputs: dict[str, Any]) -> dspy.Prediction:
        pred.checklist = clean_list(pred.checklist, "checklist")
        return pred


class ChecklistFromInstruction(ChecklistFromResponse):
    """Instruction-to-response direction: the translated instruction plus the response's concepts."""

    signature = sig.InstructionToResponseChecklist
    label = "checklist instruction→response"


class GradeJudgment(Stage):
    """The graded judgment: one response on its own, yes / partly / no, read with probabilities."""

    signature = sig.GradeResponse
    label = "grade"
    probabilities = True
    max_tokens = 192

    def check(self, pred: dspy.Prediction, inputs: dict[str, Any]) -> dspy.Prediction:
        if pred.fulfils not in ("yes", "partly", "no"):
            raise ValueError(f"grade {pred.fulfils!r} is not yes, partly or no")
        return pred


class GradeWithReference(GradeJudgment):
    """The graded judgment with the judge's own reference answer beside the response (`reference=True`)."""

    signature = sig.GradeAgainstReference


class Reference(Stage):
    """The judge's own short answer to the instruction, written before it reads any response."""

    signature = sig.ReferenceAnswer
    label = "reference answer"
    # A one-line answer or a sentence or two on what a long answer must contain.
    max_tokens = 96

    def check(self, pred: dspy.Prediction, inputs: dict[str, Any]) -> dspy.Prediction:
        return stripped_text(pred, "reference", "reference answer")


class ScoreJudgment(Stage):
    signature = sig.PointwiseJudgment
    label = "score"
    probabilities = True

    def check(self, pred: dspy.Prediction, inputs: dict[str, Any]) -> dspy.Prediction:
        levels = inputs["scale"]
        # DSPy shows numeric bounds but does not enforce them: a small model can answer 100.
        if not isinstance(pred.score, int) or pred.score not in levels:
            raise ValueError(f"score {pred.score!r} is not a level of the scale {min(levels)}-{max(levels)}")
        return pred


class ScoreWithReference(ScoreJudgment):
    """The pointwise judgment with the judge's own translation of the source beside the response."""

    signature = sig.PointwiseJudgmentWithReference


class ScoreUnanswered(ScoreJudgment):
    """The pointwise judgment that reads the checklist without writing answers (`answers=False`)."""

    signature = sig.without_answers(sig.PointwiseJudgment)


class ScoreWithReferenceUnanswered(ScoreJudgment):
    """The judgment with the judge's own translation, reading the checklist without writing answers."""

    signature = sig.without_answers(sig.PointwiseJudgmentWithReference)


class ReferenceTranslation(Stage):
    """The judge's own translation of the source into the response's language, written before it reads the
    response (the pointwise judge's `reference=True`). Into English, when the LLM translates, stage 2's
    translation of the source serves instead (_pointwise.py)."""

    signature = sig.TranslateForReference
    label = "reference translation"
    max_tokens = 256

    def check(self, pred: dspy.Prediction, inputs: dict[str, Any]) -> dspy.Prediction:
        return stripped_text(pred, "translation", "reference translation")


class VerdictJudgment(Stage):
    signature = sig.PairwiseJudgment
    label = "verdict"
    probabilities = True

    def check(self, pred: dspy.Prediction, inputs: dict[str, Any]) -> dspy.Prediction:
        if pred.verdict not in ("A", "B"):
            raise ValueError(f"verdict {pred.verdict!r} is neither A nor B")
        return pred
