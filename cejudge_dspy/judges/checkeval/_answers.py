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
from cejudge_dspy.judges._machinery._stage import Stage, StageFailure
from cejudge_dspy.judges.checkeval._stages import SubDimensionSignature
from cejudge_dspy.judges.verdicts import UNAVAILABLE, Probabilities, TokenChoice, mean_yes, read_list_field

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
    probabilities = True  # RocketEval: a question's value is P(yes) at its answer token

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
        pred.p_yes = p_yes_of(getattr(pred, "tokens", None), n)
        return pred


def p_yes_of(tokens: list[TokenChoice] | None, n: int) -> list[float | None] | None:
    """P(yes) normalised over yes/no at each of the first `n` answers (None where it was not read);
    None when the backbone gave no probabilities."""
    if tokens is None:
        return None
    readings = read_list_field(tokens, "answers", ("yes", "no"))
    if isinstance(readings, str):
        return [None] * n
    values = [r.distribution["yes"] if r.ok else None for r in readings[:n]]
    return values + [None] * (n - len(values))


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


Outcome = tuple[list[str | None], list[str | None], int, str | None, list[float | None] | None]


async def _ask(stage: Answer, inputs: dict[str, Any]) -> Outcome:
    """(parsed answers, raw answers, extra answers, failure, P(yes) per answer or None when the backbone
    gives no probabilities): a failed call leaves its questions missing."""
    n = len(inputs["questions"])
    try:
        pred = await stage.acall(**inputs)
    except StageFailure as failure:
        return [None] * n, [None] * n, 0, failure.reason, [None] * n
    return pred.parsed, pred.raw_answers, pred.n_extra, None, pred.p_yes


def _details(groups: list[tuple[str, str, list[str]]], outcomes: list[Outcome]) -> dict[str, Any]:
    answers, failures, warnings = [], {}, []
    for (dim, sub, questions), (parsed, raw, extra, error, p_yes) in zip(groups, outcomes, strict=True):
        p_yes = p_yes if p_yes is not None else [None] * len(questions)
        answers += [
            {"dimension": dim, "subdimension": sub, "question": q, "answer": a, "raw": r, "p_yes": p}
            for q, a, r, p in zip(questions, parsed, raw, p_yes, strict=True)
        ]
        if error:
            failures[f"{dim}/{sub}"] = error
        if extra:
            warnings.append(f"{dim}/{sub}: {extra} answer(s) beyond the {len(questions)} questions ignored")
    n_missing = sum(a["answer"] is None for a in answers)
    out = {"answers": answers, "failures": failures, "warnings": warnings, "n_missing": n_missing}
    out["probabilities_given"] = any(o[4] is not None for o in outcomes if o[3] is None)
    return out


def checklist_probabilities(details: dict[str, Any], key: str) -> Probabilities:
    """Mean P(yes) per value of `key` (a dimension) and over all questions, the share of Yes kept beside
    it in the headline; questions whose P(yes) was not read are left out and counted in `reason`."""
    answers = details["answers"]
    if not details.get("probabilities_given"):
        return Probabilities(status="unavailable", reason=UNAVAILABLE)
    unread = sum(a.get("p_yes") is None for a in answers)
    by_key: dict[str, list[float | None]] = {}
    for row in answers:
        by_key.setdefault(row[key], []).append(row.get("p_yes"))
    dims = {k: m for k, values in by_key.items() if (m := mean_yes(values)) is not None}
    overall = mean_yes(a.get("p_yes") for a in answers)
    if overall is None:
        return Probabilities(status="not_located", reason="no answer token was found in the output")
    reason = f"P(yes) not read for {unread} of {len(answers)} questions" if unread else None
    return Probabilities(status="ok", reason=reason, score=overall, dimension_scores=dims)


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
