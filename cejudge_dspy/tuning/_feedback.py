"""What every tuning metric's feedback shares: the result behind a prediction, quotes clipped to a
prompt-sized length, the format-failure score and what the stage under reflection produced.

An unparsed output scores 0 with format feedback naming the stage and the reason. Both modes' metrics
(_pairwise_scoring.py, _pointwise_scoring.py) and the dev score (_dev.py) read predictions through
`result_of`, so a program that raised (GEPA's FailedPrediction) counts as unparsed everywhere alike.
"""

from __future__ import annotations

from typing import Any

import dspy

from cejudge_dspy.judges.verdicts import JudgeResult

_CLIP = 300  # characters of any quoted text in feedback: enough to reflect on, small enough for a prompt


def _clip(text: Any) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= _CLIP else s[: _CLIP - 3] + "..."


def result_of(pred: Any) -> JudgeResult | None:
    """The JudgeResult behind a prediction (None for a program that raised, e.g. GEPA's FailedPrediction)."""
    if isinstance(pred, JudgeResult):
        return pred
    result = getattr(pred, "result", None)
    return result if isinstance(result, JudgeResult) else None


def _format_failure(result: JudgeResult | None) -> dspy.Prediction:
    if result is None:
        why = "the program produced no judgment (it raised before returning a result)"
    else:
        why = f"stage {result.error_stage} could not be parsed: {_clip(result.error)}"
    return dspy.Prediction(
        score=0.0,
        feedback=(
            f"FORMAT FAILURE: {why}. Score 0. Every output field must be present and follow the "
            "required format exactly (verdict exactly A or B, score an integer level of the scale, "
            "lists as JSON lists)."
        ),
    )


def _stage_detail(result: JudgeResult, pred_name: str | None) -> list[str]:
    """What the stage under reflection produced, so its instruction can be judged by its effect."""
    stage = (pred_name or "").split(".")[0]
    lines: list[str] = []
    if stage in ("checklist_r2i", "checklist_i2r"):
        for who, items in result.checklists.items():
            lines.append(f"Checklist for {who} ({len(items)} items): " + _clip(" | ".join(items)))
    elif stage == "concepts":
        lines += [f"Concepts of {who}: {_clip(', '.join(c))}" for who, c in result.concepts.items()]
    elif stage == "translate" and result.translations:
        lines += [f"English translation of {who}: {_clip(t)}" for who, t in result.translations.items()]
    return lines


def _judge_said(
    result: JudgeResult, pred_name: str | None, reasoning: str = "Judge's reasoning"
) -> list[str]:
    """How every feedback ends: the judge's own reasoning and answers, then what the stage under
    reflection produced."""
    lines: list[str] = []
    if result.feedback:
        lines.append(f"{reasoning}: {_clip(result.feedback)}")
    if result.answers:
        lines.append("Checklist items the judge answered: " + _clip(" | ".join(result.answers)))
    return lines + _stage_detail(result, pred_name)
