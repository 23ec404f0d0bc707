"""CheckEval's answering stage and what follows it: read each answer as yes / no / missing, then score.

A missing answer (unreadable, or its call failed) is recorded and excluded, never guessed; a score is
the share of Yes among the questions answered.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

import dspy

from cejudge_dspy.errors import InputError
from cejudge_dspy.methods.checkeval.stages import SubDimensionSignature
from cejudge_dspy.methods.stages import Stage, StageFailure

YesNo = Literal["yes", "no"]


class AnswerQuestions(SubDimensionSignature):
    """Answer yes/no evaluation questions about a response, exactly one answer per question.

    Read the instruction (the source or context the response is based on) and the response. Then answer every
    question about the response with "yes" or "no", in the order the questions are given. Each question
    examines one aspect of the sub-dimension named here; answer it as asked, from what the texts show."""

    instruction: str = dspy.InputField(
        desc="The source or context, e.g. the summarised article or the dialogue."
    )
    response: str = dspy.InputField(desc="The response to evaluate.")
    questions: list[str] = dspy.InputField(desc="The yes/no questions, in order.")
    # list[str], not list[Literal]: a strict Literal fails the call on one "Yes."; parse_answer reads each.
    answers: list[str] = dspy.OutputField(
        desc='Exactly one answer per question, in the same order: "yes" or "no".'
    )


class Answer(Stage):
    signature = AnswerQuestions
    label = "yes/no answers"

    def check(self, pred: dspy.Prediction, inputs: dict[str, Any]) -> dspy.Prediction:
        if not isinstance(pred.answers, list):
            raise ValueError("answers is not a list")
        raw = [str(a) for a in pred.answers]
        parsed = [parse_answer(a) for a in raw]
        if not any(parsed):
            raise ValueError(f"no readable yes/no answer in {raw[:3]!r}")
        # A short list leaves the last questions missing; extra answers are dropped (noted by the judge).
        n = len(inputs["questions"])
        pred.raw_answers = raw[:n] + [None] * (n - len(raw))
        pred.parsed = parsed[:n] + [None] * (n - len(parsed))
        pred.n_extra = max(len(raw) - n, 0)
        return pred


_LEAD = re.compile(r"^\W*(?:(?:q(?:uestion)?\s*)?\d+\s*[.:)\]-]*\s*)?(?:answer\s*[:-]\s*)?")
_BOTH = re.compile(r"^(?:yes|no)\s*(?:/|\band\b|\bor\b)\s*(?:yes|no)\b")
# "No idea" is not a No.
_NOT_AN_ANSWER = {"idea", "answer", "clue", "opinion", "comment"}


def parse_answer(value: object) -> YesNo | None:
    """One answer: "yes", "YES.", "Yes, because..." -> "yes"; "No.", "2. no" -> "no"; else None (missing).

    Only a leading yes or no counts, so "not sure", "I don't know", "unknown", "No idea" and "yes/no" are
    missing, never a No. A question echoed before its answer ("Is it clear? Yes") is skipped.
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, str):
        return None
    text = _LEAD.sub("", value.strip().lower())
    if not re.match(r"(?:yes|no)\b", text) and "?" in text:
        text = _LEAD.sub("", text.rsplit("?", 1)[1])
    words = re.findall(r"[a-z]+", text)
    if not words or words[0] not in ("yes", "no") or _BOTH.match(text):
        return None
    if words[0] == "no" and len(words) > 1 and words[1] in _NOT_AN_ANSWER:
        return None
    return "yes" if words[0] == "yes" else "no"


def share_of_yes(answers: Iterable[str | None]) -> float | None:
    """Yes / (Yes + No); missing answers (None) are excluded. None when nothing was answered."""
    yes = no = 0
    for a in answers:
        if a not in ("yes", "no", None):
            raise InputError(f"answer {a!r} is not 'yes', 'no' or None (parse it first)", field="answers")
        yes += a == "yes"
        no += a == "no"
    return yes / (yes + no) if yes + no else None


Outcome = tuple[list[str | None], list[str | None], int, str | None]


async def _ask(stage: Answer, inputs: dict[str, Any]) -> Outcome:
    """(parsed answers, raw answers, extra answers, failure): a failed call leaves its questions missing."""
    n = len(inputs["questions"])
    try:
        pred = await stage.acall(**inputs)
    except StageFailure as failure:
        return [None] * n, [None] * n, 0, failure.reason
    return pred.parsed, pred.raw_answers, pred.n_extra, None


def _details(groups: list[tuple[str, str, list[str]]], outcomes: list[Outcome]) -> dict[str, Any]:
    answers, failures, warnings = [], {}, []
    for (dim, sub, questions), (parsed, raw, extra, error) in zip(groups, outcomes, strict=True):
        answers += [
            {"dimension": dim, "subdimension": sub, "question": q, "answer": a, "raw": r}
            for q, a, r in zip(questions, parsed, raw, strict=True)
        ]
        if error:
            failures[f"{dim}/{sub}"] = error
        if extra:
            warnings.append(f"{dim}/{sub}: {extra} answer(s) beyond the {len(questions)} questions ignored")
    n_missing = sum(a["answer"] is None for a in answers)
    return {"answers": answers, "failures": failures, "warnings": warnings, "n_missing": n_missing}


def _unanswered(details: dict[str, Any]) -> str:
    """Why nothing could be scored: the first failed call, else that every answer was unreadable."""
    return next(iter(details["failures"].values()), "no question was answered yes or no")


def _scores(answers: list[dict[str, Any]], key: str) -> tuple[float | None, dict[str, float]]:
    """The share of Yes over all answers, and per value of `key` (only where something was answered)."""
    by_key: dict[str, list[str | None]] = {}
    for row in answers:
        by_key.setdefault(row[key], []).append(row["answer"])
    shares = {k: s for k, group in by_key.items() if (s := share_of_yes(group)) is not None}
    return share_of_yes(row["answer"] for row in answers), shares
