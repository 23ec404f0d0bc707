"""CheckEval: answer a task's yes/no checklist, one call per sub-dimension, and score the share of Yes.

One item's journey:
  checklist (built and reviewed once: see _build.py; the declared seeds when none was built)
  -> AnswerQuestions per sub-dimension                         (all at once)
  -> parse each answer to yes / no / missing (missing is recorded and excluded, never guessed)
  -> dimension score = Yes / answered within the dimension; score = Yes / answered over all questions
The stage attribute `answer` keys the saved program JSON: keep its name. The answering stage and
scoring live in _answers.py; the correlation and agreement reports over runs live in
`cejudge_dspy.metrics`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import dspy

from cejudge_dspy.data import normalize_language, require_text
from cejudge_dspy.errors import TaskError
from cejudge_dspy.judges._machinery._probability_readings import check_decision
from cejudge_dspy.judges._machinery._sync_bridge import run_sync
from cejudge_dspy.judges.checkeval._answers import (
    Answer,
    _ask,
    _details,
    _scores,
    _unanswered,
    checklist_probabilities,
)
from cejudge_dspy.judges.checkeval._checklist import Checklist, default_checklist_path
from cejudge_dspy.judges.checkeval._stages import subdimension_inputs
from cejudge_dspy.judges.verdicts import Decision, JudgeResult, decide, unparsed
from cejudge_dspy.tasks import TaskSpec, load_task
from cejudge_dspy.usage import Usage, about, collecting


class CheckEvalJudge(dspy.Module):
    """Score one response by the share of Yes on the task's checklist, per dimension and overall.

    `checklist` is a built (and reviewed) `Checklist`; without one the declared seed questions are used
    (the method's seed-only setting), which `details["checklist"]["augmented"] = False` records.
    """

    def __init__(
        self,
        task: str | TaskSpec = "summeval",
        checklist: Checklist | None = None,
        decision: Decision = "probability",
    ) -> None:
        super().__init__()
        self.spec = load_task(task)
        self.decision = check_decision(decision)
        if self.spec.mode != "pointwise":
            raise TaskError(f"task '{self.spec.name}' is {self.spec.mode}; CheckEval judges pointwise tasks")
        self.checklist = checklist if checklist is not None else Checklist.from_seeds(self.spec)
        self.checklist.matches(self.spec)
        self.answer = Answer()

    async def aforward(
        self, instruction: str, response: str, language: str = "en", response_language: str | None = None
    ) -> dspy.Prediction:
        instruction, response = require_text(instruction, "instruction"), require_text(response, "response")
        normalize_language(language)
        groups = self.checklist.groups()
        usage = Usage()
        with collecting(usage, expected_calls=len(groups)):  # one call per sub-dimension
            outcomes = await asyncio.gather(
                *(
                    about(f"{d}/{s}", _ask(self.answer, self._inputs(d, s, qs, instruction, response)))
                    for d, s, qs in groups
                )
            )
        details = _details(groups, outcomes)
        details["checklist"] = {
            "augmented": self.checklist.augmented,
            "built_with": self.checklist.built_with,
        }
        score, dims = _scores(details["answers"], "dimension")
        if score is None:
            return unparsed(
                "pointwise", "Answer", _unanswered(details), method="checkeval", usage=usage, details=details
            ).to_prediction()
        result = JudgeResult(
            mode="pointwise",
            status="ok",
            method="checkeval",
            score=score,
            dimension_scores=dims,
            usage=usage,
            details=details,
            probabilities=checklist_probabilities(details, "dimension"),
        )
        return decide(result, self.decision).to_prediction()

    def _inputs(
        self, dim: str, sub: str, questions: list[str], instruction: str, response: str
    ) -> dict[str, Any]:
        dimension = next(d for d in self.spec.dimensions if d.name == dim)
        subdimension = next(s for s in dimension.subdimensions if s.name == sub)
        return {
            **subdimension_inputs(self.spec, dimension, subdimension),
            "instruction": instruction,
            "response": response,
            "questions": questions,
        }

    def forward(self, **kwargs: Any) -> dspy.Prediction:
        return run_sync(self.aforward(**kwargs))


def resolve_checklist(spec: TaskSpec, checklist: Checklist | str | Path | None) -> Checklist:
    """A Checklist as given, loaded from a path, the task's default file when it exists, else the seeds."""
    if isinstance(checklist, Checklist):
        return checklist
    if checklist is not None:
        return Checklist.load(spec, checklist)
    path = default_checklist_path(spec)
    return Checklist.load(spec, path) if path.is_file() else Checklist.from_seeds(spec)


def checkeval_program(
    spec: TaskSpec,
    checklist: Checklist | str | Path | None = None,
    decision: Decision = "probability",
) -> dspy.Module:
    return CheckEvalJudge(spec, checklist=resolve_checklist(spec, checklist), decision=decision)
