"""CheckEval: answer a task's yes/no checklist, one call per sub-dimension, and score the share of Yes.

One item's journey:
  checklist (built and reviewed once: see checklist_build.py; the declared seeds when none was built)
  -> AnswerQuestions per sub-dimension                         (all at once)
  -> parse each answer to yes / no / missing (missing is recorded and excluded, never guessed)
  -> dimension score = Yes / answered within the dimension; score = Yes / answered over all questions
`cejudge-checkeval` answers CE-Judge's generated checklist the same way. The stage attribute `answer`
keys the saved program JSON: keep its name. Scoring and correlation helpers are pure functions below.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any, Literal

import dspy

from ._sync import run_sync
from .agreement import fleiss_kappa_from_labels, krippendorff_alpha
from .checklist_build import Checklist, default_checklist_path
from .errors import InputError, TaskError
from .judges import _CEJudge, _translations, require_text
from .languages import normalize_language
from .methods import register
from .metrics import MetricResult, check_aligned, is_missing, kendall_tau, pearson, spearman, undefined_result
from .results import JudgeResult, unparsed
from .signatures import TASK_DESC
from .stages import Stage, StageFailure
from .tasks import TaskSpec, load_task
from .translate import Translator
from .usage import Usage, collecting

YesNo = Literal["yes", "no"]


class AnswerQuestions(dspy.Signature):
    """Answer yes/no evaluation questions about a response, exactly one answer per question.

    Read the instruction (the source or context the response is based on) and the response. Then answer every
    question about the response with "yes" or "no", in the order the questions are given. Each question
    examines one aspect of the sub-dimension named here; answer it as asked, from what the texts show."""

    task: str = dspy.InputField(desc=TASK_DESC)
    dimension: str = dspy.InputField(desc="The evaluation dimension the questions belong to.")
    dimension_definition: str = dspy.InputField(desc="What the dimension means, as declared by the task.")
    subdimension: str = dspy.InputField(desc="The sub-dimension: one facet of the dimension.")
    subdimension_definition: str = dspy.InputField(desc="What the sub-dimension covers.")
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


class CheckEvalJudge(dspy.Module):
    """Score one response by the share of Yes on the task's checklist, per dimension and overall.

    `checklist` is a built (and reviewed) `Checklist`; without one the declared seed questions are used
    (the method's seed-only setting), which `details["checklist"]["augmented"] = False` records.
    """

    def __init__(self, task: str | TaskSpec = "summeval", checklist: Checklist | None = None) -> None:
        super().__init__()
        self.spec = load_task(task)
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
        with collecting(usage):
            outcomes = await asyncio.gather(
                *(_ask(self.answer, self._inputs(d, s, qs, instruction, response)) for d, s, qs in groups)
            )
        details = _details(groups, outcomes)
        details["checklist"] = {
            "augmented": self.checklist.augmented,
            "built_with": self.checklist.built_with,
        }
        score, dims = _scores(details["answers"], "dimension")
        if score is None:
            reason = next(iter(details["failures"].values()), "no question was answered yes or no")
            return unparsed(
                "pointwise", "Answer", reason, method="checkeval", usage=usage, details=details
            ).to_prediction()
        return JudgeResult(
            mode="pointwise",
            status="ok",
            method="checkeval",
            score=score,
            dimension_scores=dims,
            usage=usage,
            details=details,
        ).to_prediction()

    def _inputs(
        self, dim: str, sub: str, questions: list[str], instruction: str, response: str
    ) -> dict[str, Any]:
        dimension = next(d for d in self.spec.dimensions if d.name == dim)
        subdimension = next(s for s in dimension.subdimensions if s.name == sub)
        return dict(
            task=self.spec.task,
            dimension=dim,
            dimension_definition=dimension.definition.strip(),
            subdimension=sub,
            subdimension_definition=subdimension.definition.strip(),
            instruction=instruction,
            response=response,
            questions=questions,
        )

    def forward(self, **kwargs: Any) -> dspy.Prediction:
        return run_sync(self.aforward(**kwargs))


# The two CE-Judge checklist directions, presented to AnswerQuestions as sub-dimensions of the criteria.
_DIRECTIONS = {
    "response_to_instruction": "Questions raised by the response itself: its content, claims and choices.",
    "instruction_to_response": "Questions about how the response meets what the instruction requires.",
}


class CEJudgeCheckEval(_CEJudge):
    """Hybrid: CE-Judge's concepts, translations and checklists, answered yes/no; score = share of Yes.

    Reuses the CE-Judge stages (`concepts`, `translate`, `checklist_r2i`, `checklist_i2r`) and replaces the
    scored judgment with `answer`, one call per checklist direction. CE-Judge questions are written not to
    prejudge quality, but unlike CheckEval's filtered checklist a "yes" is not guaranteed to mean better.
    """

    mode = "pointwise"

    def __init__(self, task: str | TaskSpec = "literary", translator: str | Translator = "llm") -> None:
        super().__init__(task, translator)
        self.answer = Answer()

    async def aforward(
        self, instruction: str, response: str, language: str = "en", response_language: str | None = None
    ) -> dspy.Prediction:
        instruction, response = require_text(instruction, "instruction"), require_text(response, "response")
        language = normalize_language(language)
        response_language = normalize_language(response_language) if response_language else language
        usage = Usage()
        found: dict[str, Any] = {"usage": usage, "method": "cejudge-checkeval"}
        with collecting(usage):
            try:
                seen = await self._understand(instruction, response, language, response_language)
            except StageFailure as failure:
                return unparsed("pointwise", failure.stage, failure.reason, failure.raw, **found).to_prediction()
            found["concepts"] = {"instruction": seen.instruction_concepts, "response": seen.concepts}
            found["translations"] = _translations(
                instruction=(instruction, seen.instruction_english), response=(response, seen.english)
            )
            parts = seen.checklist_parts
            found["checklist_parts"] = {"response": parts}
            found["checklists"] = {"response": seen.checklist}
            groups = [("criteria", d, parts[d]) for d in _DIRECTIONS]
            # The checklist questions stand for the task's criteria; each direction is one sub-dimension call.
            base = dict(
                task=self.spec.task,
                dimension="criteria",
                dimension_definition=self.spec.criteria,
                instruction=instruction,
                response=response,
            )
            outcomes = await asyncio.gather(
                *(
                    _ask(
                        self.answer,
                        {
                            **base,
                            "subdimension": d,
                            "subdimension_definition": _DIRECTIONS[d],
                            "questions": qs,
                        },
                    )
                    for _, d, qs in groups
                )
            )
        details = _details(groups, outcomes)
        score, details["direction_scores"] = _scores(details["answers"], "subdimension")
        if score is None:
            reason = next(iter(details["failures"].values()), "no question was answered yes or no")
            return unparsed("pointwise", "Answer", reason, details=details, **found).to_prediction()
        return JudgeResult(
            mode="pointwise", status="ok", score=score, details=details, **found
        ).to_prediction()


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


def _scores(answers: list[dict[str, Any]], key: str) -> tuple[float | None, dict[str, float]]:
    """The share of Yes over all answers, and per value of `key` (only where something was answered)."""
    by_key: dict[str, list[str | None]] = {}
    for row in answers:
        by_key.setdefault(row[key], []).append(row["answer"])
    shares = {k: s for k, group in by_key.items() if (s := share_of_yes(group)) is not None}
    return share_of_yes(row["answer"] for row in answers), shares


def resolve_checklist(spec: TaskSpec, checklist: Checklist | str | Path | None) -> Checklist:
    """A Checklist as given, loaded from a path, the task's default file when it exists, else the seeds."""
    if isinstance(checklist, Checklist):
        return checklist
    if checklist is not None:
        return Checklist.load(spec, checklist)
    path = default_checklist_path(spec)
    return Checklist.load(spec, path) if path.is_file() else Checklist.from_seeds(spec)


@register("checkeval")
def _checkeval(spec: TaskSpec, checklist: Checklist | str | Path | None = None, **_: Any) -> dspy.Module:
    return CheckEvalJudge(spec, checklist=resolve_checklist(spec, checklist))


@register("cejudge-checkeval")
def _cejudge_checkeval(spec: TaskSpec, translator: str = "llm", **_: Any) -> dspy.Module:
    return CEJudgeCheckEval(spec, translator=translator)


_CORRELATIONS = {"spearman": spearman, "kendall": kendall_tau, "pearson": pearson}


def per_group_correlation(
    scores: Sequence[object],
    humans: Sequence[object],
    groups: Sequence[Hashable | None],
    method: str = "spearman",
) -> MetricResult:
    """The CheckEval paper's document-level correlation: computed within each group, then averaged.

    Shapes: three item-aligned sequences; `groups` holds e.g. the document id of each system output.
    Items missing a score, a human value or a group are excluded (`extra["n_items_missing"]`). A group
    whose correlation is undefined (fewer than 2 items, or constant scores or human values on either side,
    which a share of Yes over few questions produces easily) is left out of the average, as the paper's
    reference code does, and counted in `n_excluded`; `n` is the number of groups averaged. With no
    defined group the value is NaN with a reason (the reference code reports 0 there).
    """
    if method not in _CORRELATIONS:
        raise InputError(f"unknown method {method!r}; use {', '.join(_CORRELATIONS)}", field="method")
    s, h, g = check_aligned([scores, humans, groups], ["scores", "humans", "groups"])
    by_group: dict[Hashable, tuple[list[object], list[object]]] = {}
    missing = 0
    for x, y, key in zip(s, h, g, strict=True):
        if is_missing(x) or is_missing(y) or key is None:
            missing += 1
            continue
        xs, ys = by_group.setdefault(key, ([], []))
        xs.append(x)
        ys.append(y)
    results = [_CORRELATIONS[method](xs, ys) for xs, ys in by_group.values()]
    values = [r.value for r in results if r.defined]
    name = f"{method}_per_group"
    extra = {"n_groups": len(by_group), "n_items_missing": missing}
    if not values:
        return undefined_result(
            name,
            0,
            len(by_group),
            "no group has a defined correlation (each needs 2+ items and varying scores and human values)",
            **extra,
        )
    return MetricResult(
        name, sum(values) / len(values), len(values), len(by_group) - len(values), extra=extra
    )


def agreement(
    run_results: Sequence[Sequence[Any]],
    *,
    humans: Sequence[object] | Mapping[str, object] | None = None,
    human_key: str | None = None,
    dimension: str | None = None,
    method: str = "spearman",
) -> dict[str, Any]:
    """Agreement of several runs (backbones, repeats) over the same items: raters = runs, units = items.

    A run is a list of JudgeResults, their `to_dict()`s, or runner records (`runner.Record` or its dict:
    "id", "item" with its "label", "result"; a missing result counts as unparsed). Items align by "id"
    when every row has one, else by position. Returns:
    - `krippendorff_alpha`: interval alpha on the overall score (or on `dimension_scores[dimension]`);
      unparsed = missing.
    - `fleiss_kappa`: on the per-question yes/no answers in `details["answers"]`; a question counts only
      when every run answered it.
    - `human_correlation`: each run's correlation with the human labels and its spread (min, max, mean,
      sample std over the runs with a defined value), or None without labels.
    Labels come from the records or from `humans` (aligned to the items, or id -> label); a dict label is
    read at `human_key`, else at `dimension`. Metric values are `MetricResult.to_dict()`s.
    """
    if not run_results:
        raise InputError("needs at least one run", field="run_results")
    rows = [[_row(r) for r in run] for run in run_results]
    if all(rid is not None for run in rows for rid, _, _ in run):
        keys: list[Hashable] = list(dict.fromkeys(rid for run in rows for rid, _, _ in run))
        tables = [{rid: (res, lab) for rid, res, lab in run} for run in rows]
    else:
        if len({len(run) for run in rows}) > 1:
            raise InputError("runs have different lengths and no item ids to align them", field="run_results")
        keys = list(range(len(rows[0])))
        tables = [{i: (res, lab) for i, (_, res, lab) in enumerate(run)} for run in rows]
    results = [[t.get(k, ({}, None))[0] for k in keys] for t in tables]
    scores = [[_value(res, dimension) for res in run] for run in results]
    answers = [
        {
            (k, a["dimension"], a["subdimension"], a["question"]): a["answer"]
            for k, res in zip(keys, run, strict=True)
            for a in res.get("details", {}).get("answers", [])
        }
        for run in results
    ]
    units = list(dict.fromkeys(u for run in answers for u in run))
    kappa = (
        fleiss_kappa_from_labels([[run.get(u) for u in units] for run in answers], categories=("yes", "no"))
        if units
        else undefined_result("fleiss_kappa", 0, 0, "no per-question answers")
    )
    labels = [next((t[k][1] for t in tables if k in t and t[k][1] is not None), None) for k in keys]
    if humans is not None:
        labels = [
            humans.get(k) if isinstance(humans, Mapping) else humans[i]  # type: ignore[call-overload]
            for i, k in enumerate(keys)
        ]
    gold = [_gold(label, human_key or dimension) for label in labels]
    return {
        "n_runs": len(rows),
        "n_items": len(keys),
        "krippendorff_alpha": krippendorff_alpha(scores, level="interval").to_dict(),
        "fleiss_kappa": kappa.to_dict(),
        "human_correlation": _spread(scores, gold, method) if any(v is not None for v in gold) else None,
    }


def _row(row: Any) -> tuple[Hashable | None, dict[str, Any], object]:
    """(item id, result dict, label) from a JudgeResult, its dict, or a runner record."""
    if isinstance(row, JudgeResult):
        return None, row.to_dict(), None
    if is_dataclass(row) and not isinstance(row, type):  # runner.Record
        row = asdict(row)
    if not isinstance(row, Mapping):
        raise InputError(
            f"a run row must be a JudgeResult or a dict, got {type(row).__name__}", field="run_results"
        )
    if "result" in row:  # a record: {"id", "item": {..., "label"}, "result": dict, or None after an error}
        result, item = row["result"], row.get("item") or {}
        result = result.to_dict() if isinstance(result, JudgeResult) else dict(result or {})
        return row.get("id"), result, row.get("label", item.get("label"))
    return row.get("id"), dict(row), row.get("label")


def _value(result: dict[str, Any], dimension: str | None) -> float | None:
    if result.get("status") != "ok":
        return None
    return result.get("dimension_scores", {}).get(dimension) if dimension else result.get("score")


def _gold(label: object, key: str | None) -> object:
    if isinstance(label, Mapping):
        if key is None:
            raise InputError(
                "labels hold several human scores: pass human_key (or dimension)", field="human_key"
            )
        return label.get(key)
    return label


def _spread(scores: list[list[float | None]], gold: list[object], method: str) -> dict[str, Any]:
    if method not in _CORRELATIONS:
        raise InputError(f"unknown method {method!r}; use {', '.join(_CORRELATIONS)}", field="method")
    per_run = [_CORRELATIONS[method](run, gold) for run in scores]
    values = [r.value for r in per_run if r.defined]
    mean = sum(values) / len(values) if values else None
    std = (
        math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))  # type: ignore[operator]
        if len(values) >= 2
        else None
    )
    return {
        "method": method,
        "per_run": [r.to_dict() for r in per_run],
        "min": min(values, default=None),
        "max": max(values, default=None),
        "mean": mean,
        "std": std,
    }
