"""The judgment in words, for the program being judged: what the score is, the checklist the response was
held to, what the judge answered for each item, its grades and its reasoning.

GEPA reflects on this text to rewrite the judged program's instructions, so it names what the response
misses (a checklist item answered "no" or "partly", a CheckEval question answered no) rather than only
how much it scored. The same lines go into an Inspect score's explanation.
"""

from __future__ import annotations

from typing import Any

from cejudge_dspy.bridges._judge import Judgment
from cejudge_dspy.judges.verdicts import JudgeResult

_CLIP = 400  # characters of any one quoted text: enough to act on, small enough for a reflection prompt
_ITEMS = 12  # checklist items and answers listed; the rest are counted


def _clip(text: Any) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= _CLIP else s[: _CLIP - 3] + "..."


def _listed(title: str, lines: list[str]) -> list[str]:
    if not lines:
        return []
    more = [f"  (and {len(lines) - _ITEMS} more)"] if len(lines) > _ITEMS else []
    return [f"{title}:", *(f"  - {_clip(line)}" for line in lines[:_ITEMS]), *more]


def feedback_text(judgment: Judgment) -> str:
    """The judgment as feedback text (see the module docstring); an unparsed judgment says so and why."""
    result = judgment.result
    if not judgment.ok:
        stage = f" at stage {result.error_stage}" if result.error_stage else ""
        return (
            f"The judge ({result.method}) gave no judgment: its output could not be read{stage} "
            f"({_clip(result.error or 'no score')}). This says nothing about the response."
        )
    head = _pairwise_head(judgment) if result.mode == "pairwise" else _pointwise_head(judgment)
    return "\n".join([*head, *_checklists(result), *_checkeval(result), *_reasoning(result)])


def _pointwise_head(judgment: Judgment) -> list[str]:
    result = judgment.result
    low, high = judgment.score_range or (0.0, 1.0)
    return [
        f"The judge ({result.method}) scored the response {result.score:g} on a scale from {low:g} to "
        f"{high:g} (normalised: {judgment.score:.2f})."
    ]


def _pairwise_head(judgment: Judgment) -> list[str]:
    result = judgment.result
    said = {
        "A": "the response is better than the reference answer",
        "B": "the reference answer is better than the response",
        "tie": "the response and the reference answer are equally good (or the judge's two orders disagreed)",
    }[result.verdict or "tie"]
    lines = [f"The judge ({result.method}) compared the response (A) with the reference answer (B): {said}."]
    probs = result.probabilities
    if probs is not None and probs.ok and probs.p_a is not None:
        lines.append(f"Probability that the response is the better one: {probs.p_a:.2f}.")
    for key, who in (("a", "The response"), ("b", "The reference answer")):
        grade = result.grades.get(key)
        if grade is not None and grade.label is not None:
            lines.append(f"{who} fulfils the instruction: {grade.label}. {_clip(grade.feedback)}".rstrip())
    return lines


def _checklists(result: JudgeResult) -> list[str]:
    """The checklist each response was held to, and the judge's answers to it."""
    names = {"response": "the response", "a": "the response", "b": "the reference answer"}
    lines: list[str] = []
    for key, items in result.checklists.items():
        lines += _listed(f"Checklist for {names.get(key, key)}", list(items))
    answers = list(result.answers) or [a for order in result.orders for a in order.answers]
    return lines + _listed("The judge's answers to the checklist", answers)


def _checkeval(result: JudgeResult) -> list[str]:
    """CheckEval: the share of Yes per dimension and the questions answered no, which say what is missing."""
    answers = result.details.get("answers") if result.method == "checkeval" else None
    if not answers:
        return []
    dims = [f"{name}: {value:.2f}" for name, value in result.dimension_scores.items()]
    missed = [f"({a['dimension']}) {a['question']}" for a in answers if a.get("answer") == "no"]
    return [
        f"Share of checklist questions answered yes, per dimension: {'; '.join(dims)}.",
        *_listed("Questions answered no", missed),
    ]


def _reasoning(result: JudgeResult) -> list[str]:
    said = [result.feedback] if result.feedback else [o.feedback for o in result.orders if o.feedback]
    return [f"The judge's reasoning: {_clip(text)}" for text in said]


def judgment_metadata(judgment: Judgment) -> dict[str, Any]:
    """What an Inspect score keeps beside its value: the verdict, p(A) or score, and the checklist."""
    result = judgment.result
    probs = result.probabilities
    out: dict[str, Any] = {
        "method": result.method,
        "status": result.status,
        "checklists": {k: list(v) for k, v in result.checklists.items()},
        "answers": list(result.answers),
    }
    if result.mode == "pairwise":
        out["verdict"] = result.verdict
        out["p_a"] = probs.p_a if probs is not None and probs.ok else None
        out["grades"] = {k: g.label for k, g in result.grades.items()}
    else:
        out["score"] = result.score
        out["score_range"] = list(judgment.score_range) if judgment.score_range else None
        if result.dimension_scores:
            out["dimension_scores"] = dict(result.dimension_scores)
    if not result.ok:
        out["error"], out["error_stage"] = result.error, result.error_stage
    return out
