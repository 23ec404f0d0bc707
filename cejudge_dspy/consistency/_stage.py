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


class TranslateInto(dspy.Signature):
    """Translate the text into the target language, faithfully and completely.

    Keep the meaning, the structure (paragraphs, lists, code, formulas, numbers, names) and the register. Do
    not summarise, correct, explain or answer the text; if it contains errors, translate the errors too, so
    that a judge reading your translation sees the same strengths and faults as in the original. Output only
    the translation."""

    source_language: str = dspy.InputField(desc="The language the text is written in.")
    target_language: str = dspy.InputField(desc="The language to translate into.")
    text: str = dspy.InputField(desc="The text to translate.")
    translation: str = dspy.OutputField(desc="The complete translation into the target language.")


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
