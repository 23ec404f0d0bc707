"""CheckEval's checklist: built once per task, saved, reviewed by a person, then used to judge every item.

  seed yes/no questions per sub-dimension (declared in programs/<task>.toml; Yes always means better)
  -> diversify | elaborate                 (per sub-dimension, both at once, each from the seeds only)
  -> exact repeats dropped, then one LLM filter call per sub-dimension over the generated questions
  -> Checklist: every question with its origin, kept or dropped and why -> checklists/<task>.json

Seeds are human-written, so they are always kept; the filter only judges generated questions. Stage
attributes of `ChecklistBuilder` (`diversify`, `elaborate`, `filter`) key its saved state.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import dspy

from ._sync import run_sync
from .errors import DataError, TaskError
from .signatures import TASK_DESC
from .stages import Stage, StageFailure, _clean_list
from .tasks import Dimension, SubDimension, TaskSpec, load_task

Origin = Literal["seed", "diversified", "elaborated"]
# What the filter may decide; "filter_failed" is added by the builder when the filter call itself failed.
DECISIONS = ("keep", "yes_means_worse", "off_dimension", "duplicate")
FORMAT = 1

_DIM = "The evaluation dimension the questions belong to."
_DIM_DEF = "What the dimension means, as declared by the task."
_SUB = "The sub-dimension: one facet of the dimension."
_SUB_DEF = "What the sub-dimension covers."


class DiversifyQuestions(dspy.Signature):
    """Write new yes/no evaluation questions that look at a sub-dimension from angles its seed questions miss.

    Each seed question checks one aspect of the sub-dimension. Write new questions about other aspects of the
    same sub-dimension, not rewordings of the seeds. Every question asks about one thing, can be answered with
    yes or no by reading the texts being evaluated, and is phrased so that "yes" means better quality. Stay
    inside the sub-dimension: do not ask about other qualities of the text."""

    task: str = dspy.InputField(desc=TASK_DESC)
    dimension: str = dspy.InputField(desc=_DIM)
    dimension_definition: str = dspy.InputField(desc=_DIM_DEF)
    subdimension: str = dspy.InputField(desc=_SUB)
    subdimension_definition: str = dspy.InputField(desc=_SUB_DEF)
    seeds: list[str] = dspy.InputField(desc="The seed yes/no questions of the sub-dimension.")
    diversified: list[str] = dspy.OutputField(
        desc="2 to 5 new yes/no questions on aspects the seeds do not cover."
    )


class ElaborateQuestions(dspy.Signature):
    """Break seed yes/no evaluation questions down into finer, more specific questions.

    For each seed question, write questions that check one part or one concrete case of it, so that together
    they examine the seed in more detail than the seed alone. Every question asks about one thing, can be
    answered with yes or no by reading the texts being evaluated, and is phrased so that "yes" means better
    quality. Stay inside the sub-dimension."""

    task: str = dspy.InputField(desc=TASK_DESC)
    dimension: str = dspy.InputField(desc=_DIM)
    dimension_definition: str = dspy.InputField(desc=_DIM_DEF)
    subdimension: str = dspy.InputField(desc=_SUB)
    subdimension_definition: str = dspy.InputField(desc=_SUB_DEF)
    seeds: list[str] = dspy.InputField(desc="The seed yes/no questions of the sub-dimension.")
    elaborated: list[str] = dspy.OutputField(
        desc="2 to 6 finer yes/no questions, each more specific than a seed."
    )


class FilterQuestions(dspy.Signature):
    """Review candidate yes/no evaluation questions for a sub-dimension and decide whether to keep each one.

    Give exactly one decision per candidate, in the candidates' order:
    - "yes_means_worse": a "yes" answer would mean lower quality (e.g. "Does the text contain errors?").
    - "off_dimension": the question checks a quality other than this sub-dimension of this dimension.
    - "duplicate": it asks the same thing as a seed question or as an earlier candidate.
    - "keep": none of the above applies."""

    task: str = dspy.InputField(desc=TASK_DESC)
    dimension: str = dspy.InputField(desc=_DIM)
    dimension_definition: str = dspy.InputField(desc=_DIM_DEF)
    subdimension: str = dspy.InputField(desc=_SUB)
    subdimension_definition: str = dspy.InputField(desc=_SUB_DEF)
    seeds: list[str] = dspy.InputField(desc="The seed questions, already accepted.")
    candidates: list[str] = dspy.InputField(desc="The generated questions to review, in order.")
    # list[str], not list[Literal]: a strict Literal fails the call on "Keep" or "keep."; check() maps them.
    decisions: list[str] = dspy.OutputField(
        desc='One per candidate, in order: "keep", "yes_means_worse", "off_dimension" or "duplicate".'
    )


class Diversify(Stage):
    signature = DiversifyQuestions

    def check(self, pred: dspy.Prediction, inputs: dict[str, Any]) -> dspy.Prediction:
        pred.diversified = _clean_list(pred.diversified, "diversified")
        return pred


class Elaborate(Stage):
    signature = ElaborateQuestions

    def check(self, pred: dspy.Prediction, inputs: dict[str, Any]) -> dspy.Prediction:
        pred.elaborated = _clean_list(pred.elaborated, "elaborated")
        return pred


class Filter(Stage):
    signature = FilterQuestions

    def check(self, pred: dspy.Prediction, inputs: dict[str, Any]) -> dspy.Prediction:
        decisions = _clean_list(pred.decisions, "decisions")
        if len(decisions) != len(inputs["candidates"]):
            # Misaligned decisions cannot be attributed to questions: reject rather than guess.
            raise ValueError(f"{len(decisions)} decisions for {len(inputs['candidates'])} candidates")
        pred.decisions = [_decision(d) for d in decisions]
        return pred


def _decision(text: str) -> str:
    word = re.sub(r"[^a-z]+", "_", text.lower()).strip("_")
    for decision in DECISIONS:
        if word == decision or word.startswith(decision + "_"):
            return decision
    raise ValueError(f"unknown decision {text!r}; expected one of {', '.join(DECISIONS)}")


@dataclass(frozen=True)
class Question:
    """One checklist question. `drop_reason` is a filter decision ("yes_means_worse", "off_dimension",
    "duplicate") or "filter_failed" when the filter call failed and the question went unreviewed."""

    text: str
    dimension: str
    subdimension: str
    origin: Origin
    kept: bool = True
    drop_reason: str | None = None


@dataclass
class Checklist:
    """The questions of one task declaration (name + version), kept and dropped, in declaration order."""

    task: str
    version: int
    questions: list[Question]
    augmented: bool = False
    built_with: str = ""  # the LM that augmented and filtered, for the reviewer
    failures: dict[str, str] = field(default_factory=dict)  # "dimension/sub-dimension stage" -> reason

    @classmethod
    def from_seeds(cls, task: str | TaskSpec) -> Checklist:
        """The declared seeds only: what CheckEval judges with when no checklist was built."""
        spec = load_task(task)
        _require_dimensions(spec)
        seeds = [
            Question(t, d.name, s.name, "seed")
            for d in spec.dimensions
            for s in d.subdimensions
            for t in s.seeds
        ]
        return cls(spec.name, spec.version, seeds)

    def kept(self) -> list[Question]:
        return [q for q in self.questions if q.kept]

    def groups(self) -> list[tuple[str, str, list[str]]]:
        """(dimension, sub-dimension, kept question texts): one judge call each, in declaration order."""
        grouped: dict[tuple[str, str], list[str]] = {}
        for q in self.kept():
            grouped.setdefault((q.dimension, q.subdimension), []).append(q.text)
        return [(dim, sub, texts) for (dim, sub), texts in grouped.items()]

    def counts(self) -> dict[str, int]:
        """Questions per origin that were kept, and dropped questions per reason: a review summary."""
        out: dict[str, int] = {}
        for q in self.questions:
            key = f"kept:{q.origin}" if q.kept else f"dropped:{q.drop_reason}"
            out[key] = out.get(key, 0) + 1
        return out

    def matches(self, spec: TaskSpec) -> None:
        """Refuse a checklist built for another task or declaration version, or naming unknown parts."""
        if (self.task, self.version) != (spec.name, spec.version):
            raise TaskError(
                f"checklist was built for task '{self.task}' version {self.version}, not '{spec.name}' "
                f"version {spec.version}: rebuild it with `cejudge checklist build --task {spec.name}`"
            )
        declared = {(d.name, s.name) for d in spec.dimensions for s in d.subdimensions}
        unknown = sorted({(q.dimension, q.subdimension) for q in self.questions} - declared)
        if unknown:
            raise TaskError(
                f"checklist for '{spec.name}' names sub-dimensions the task does not declare ({unknown[0]}): "
                f"rebuild it with `cejudge checklist build --task {spec.name}`"
            )

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, **asdict(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Checklist:
        data = {k: v for k, v in data.items() if k != "format"}
        data["questions"] = [Question(**q) for q in data.get("questions", [])]
        return cls(**data)

    def save(self, path: str | Path | None = None) -> Path:
        target = Path(path) if path else default_checklist_path(self.task)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return target

    @classmethod
    def load(cls, task: str | TaskSpec, path: str | Path | None = None) -> Checklist:
        """Read `path` (default `checklists/<task>.json`) and check it was built for this declaration."""
        spec = load_task(task)
        source = Path(path) if path else default_checklist_path(spec)
        if not source.is_file():
            raise DataError(f"no checklist at {source}: build it with `cejudge checklist build --task {spec.name}`")
        try:
            checklist = cls.from_dict(json.loads(source.read_text(encoding="utf-8")))
        except (ValueError, TypeError) as exc:
            raise DataError(f"{source}: not a checklist file ({exc})") from None
        checklist.matches(spec)
        return checklist


def default_checklist_path(task: str | TaskSpec) -> Path:
    """`$CEJUDGE_CHECKLISTS/<task>.json`, else the repository's `checklists/<task>.json`."""
    name = task.name if isinstance(task, TaskSpec) else task
    env = os.environ.get("CEJUDGE_CHECKLISTS")
    root = Path(env) if env else Path(__file__).resolve().parent.parent / "checklists"
    return root / f"{name}.json"


class ChecklistBuilder(dspy.Module):
    """Augments and filters a task's seed questions; returns a reviewable `Checklist`."""

    def __init__(self) -> None:
        super().__init__()
        self.diversify = Diversify()
        self.elaborate = Elaborate()
        self.filter = Filter()

    async def aforward(self, task: str | TaskSpec, augment: bool = True) -> Checklist:
        spec = load_task(task)
        _require_dimensions(spec)
        failures: dict[str, str] = {}
        subs = [(d, s) for d in spec.dimensions for s in d.subdimensions]
        groups = await asyncio.gather(*(self._subdimension(spec, d, s, augment, failures) for d, s in subs))
        lm = dspy.settings.lm
        return Checklist(
            spec.name,
            spec.version,
            [q for g in groups for q in g],
            augmented=augment,
            built_with=str(getattr(lm, "model", "")) if augment and lm else "",
            failures=failures,
        )

    async def _subdimension(
        self, spec: TaskSpec, dim: Dimension, sub: SubDimension, augment: bool, failures: dict[str, str]
    ) -> list[Question]:
        seeds = [Question(t, dim.name, sub.name, "seed") for t in sub.seeds]
        if not augment:
            return seeds
        where = f"{dim.name}/{sub.name}"
        inputs = dict(
            task=spec.task,
            dimension=dim.name,
            dimension_definition=dim.definition.strip(),
            subdimension=sub.name,
            subdimension_definition=sub.definition.strip(),
            seeds=list(sub.seeds),
        )
        # Both augmentations start from the seeds alone, as the method prescribes, so they run at once.
        div, ela = await asyncio.gather(
            self._try(self.diversify, inputs, where, failures),
            self._try(self.elaborate, inputs, where, failures),
        )
        generated = [(t, "diversified") for t in (div.diversified if div else [])]
        generated += [(t, "elaborated") for t in (ela.elaborated if ela else [])]
        # Exact repeats (case, spacing, end punctuation) need no LLM judgment.
        seen = {_norm(t) for t in sub.seeds}
        dropped, candidates = [], []
        for text, origin in generated:
            if _norm(text) in seen:
                dropped.append(Question(text, dim.name, sub.name, origin, False, "duplicate"))
            else:
                seen.add(_norm(text))
                candidates.append((text, origin))
        decisions: list[str] = []
        if candidates:
            verdict = await self._try(
                self.filter, {**inputs, "candidates": [t for t, _ in candidates]}, where, failures
            )
            # Unreviewed questions may ask "is it worse?": without a verdict they stay out.
            decisions = verdict.decisions if verdict else ["filter_failed"] * len(candidates)
        reviewed = [
            Question(text, dim.name, sub.name, origin, d == "keep", None if d == "keep" else d)  # type: ignore[arg-type]
            for (text, origin), d in zip(candidates, decisions, strict=True)
        ]
        return seeds + reviewed + dropped

    @staticmethod
    async def _try(
        stage: Stage, inputs: dict[str, Any], where: str, failures: dict[str, str]
    ) -> dspy.Prediction | None:
        try:
            return await stage.acall(**inputs)
        except StageFailure as failure:
            failures[f"{where} {failure.stage}"] = failure.reason
            return None

    def forward(self, task: str | TaskSpec, augment: bool = True) -> Checklist:
        return run_sync(self.aforward(task, augment))


async def abuild_checklist(
    task: str | TaskSpec, *, augment: bool = True, builder: ChecklistBuilder | None = None
) -> Checklist:
    """Seeds, plus (with `augment`) diversified and elaborated questions that passed the filter."""
    return await (builder or ChecklistBuilder()).aforward(task, augment)


def build_checklist(
    task: str | TaskSpec, *, augment: bool = True, builder: ChecklistBuilder | None = None
) -> Checklist:
    """Synchronous `abuild_checklist`; choose the LM with `dspy.context(lm=...)`."""
    return run_sync(abuild_checklist(task, augment=augment, builder=builder))


def _require_dimensions(spec: TaskSpec) -> None:
    if not spec.dimensions:
        raise TaskError(
            f"task '{spec.name}' declares no [[dimensions]]; CheckEval needs dimensions with seeds"
        )


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip("?.! ")
