"""The backbone's own translation into a language to check (`--translator llm`): one typed stage.

The stage writes the whole text in the target language; the simulated backbone answers it like the
pointwise judge's reference translation (`[Korean] text`), so a consistency run on `--lm simulated:0` is
exercised end to end without a model.
"""

from __future__ import annotations

from typing import Any

import dspy

from cejudge_dspy.data import language_name
from cejudge_dspy.judges import Stage
from cejudge_dspy.judges.cejudge import TranslateForReference

# CE-Judge's reference translation, with the instruction of a translation a judge reads in place of the
# original: the same fields (the languages, the text, the translation), so one signature is not written twice.
TranslateInto = TranslateForReference.with_instructions(
    """Translate the text into the target language, faithfully and completely.

    Keep the meaning, the structure (paragraphs, lists, code, formulas, numbers, names) and the register. Do
    not summarise, correct, explain or answer the text; if it contains errors, translate the errors too, so
    that a judge reading your translation sees the same strengths and faults as in the original. Output only
    the translation."""
)


class RenderStage(Stage):
    """One text rendered in the target language (`StageFailure` when the output is empty)."""

    signature = TranslateInto
    label = "rendering"

    def check(self, pred: dspy.Prediction, inputs: dict[str, Any]) -> dspy.Prediction:
        value = pred.translation
        if not isinstance(value, str) or not value.strip():
            raise ValueError("empty translation")
        pred.translation = value.strip()
        return pred


def llm_stage(target: str, stage: RenderStage | None = None) -> Any:
    """The `stage(text, source_language_name)` an ``llm`` translator into `target` calls."""
    stage = stage or RenderStage()
    target_name = language_name(target)

    async def render(text: str, source_language: str) -> str:
        pred = await stage.acall(source_language=source_language, target_language=target_name, text=text)
        return str(pred.translation)

    return render
