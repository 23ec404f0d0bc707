"""A CheckEval checklist as data: its questions, kept and dropped, and the file it is reviewed in.

Built by `_build.ChecklistBuilder`; answered by `_judge.CheckEvalJudge`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from cejudge_dspy.errors import DataError, TaskError
from cejudge_dspy.files import make_dirs, read_json, write_file_atomic
from cejudge_dspy.tasks import TaskSpec, folder, load_task

Origin = Literal["seed", "diversified", "elaborated"]
FORMAT = 1
HUMAN = "human_review:"  # the prefix of a drop_reason set by a person, e.g. "human_review:off_dimension"
# Why a person may drop a question (`cejudge checklist review FILE --drop N --reason CODE[: note]`): the
# filter's own criteria, and what only a reader of the questions or of real runs can see. README lists them.
REVIEW_REASONS = {
    "yes_means_worse": "a Yes would mean lower quality",
    "off_dimension": "it checks a quality other than its dimension and sub-dimension",
    "about_source": "it asks about the source (the article, the dialogue), not the response",
    "duplicate": "it asks what another kept question of the same dimension asks",
    "unclear": "it cannot be answered yes or no from the texts, or it asks two things at once",
    "unanswered": "the judge leaves it unanswered, or answers it the same for every item, in real runs",
}


@dataclass(frozen=True)
class Question:
    """One checklist question. `drop_reason` is a filter decision ("yes_means_worse", "off_dimension",
    "duplicate"), "filter_failed" when the filter failed on it (the retry included) so it went unreviewed,
    or "human_review:<REVIEW_REASONS code>" when a person dropped it. `reviewed` is True once a person
    kept or dropped it; `review_note` is then their words."""

    text: str
    dimension: str
    subdimension: str
    origin: Origin
    kept: bool = True
    drop_reason: str | None = None
    reviewed: bool = False
    review_note: str | None = None

    @property
    def by_person(self) -> bool:
        """Kept or dropped by a person (files written before `reviewed` existed mark it in drop_reason)."""
        return self.reviewed or str(self.drop_reason).startswith(HUMAN)


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

    def review(self, number: int, keep: bool, reason: str | None = None, note: str | None = None) -> Question:
        """A person's decision on question `number` (1-based, in file order), recorded in the question:
        a drop needs a REVIEW_REASONS code; a keep notes what the filter had said, if it dropped it."""
        if not 1 <= number <= len(self.questions):
            raise IndexError(f"no question {number}: the checklist numbers them 1 to {len(self.questions)}")
        old = self.questions[number - 1]
        if keep:
            was = f" (was dropped: {old.drop_reason})" if not old.kept else ""
            new = replace(old, kept=True, drop_reason=None, reviewed=True, review_note=(note or "kept") + was)
        else:
            if reason not in REVIEW_REASONS:
                raise ValueError(f"unknown drop reason {reason!r}; one of {', '.join(REVIEW_REASONS)}")
            new = replace(old, kept=False, drop_reason=HUMAN + reason, reviewed=True, review_note=note)
        self.questions[number - 1] = new
        return new

    def by_person(self) -> int:
        """How many questions a person kept or dropped: a build must not overwrite such a file."""
        return sum(q.by_person for q in self.questions)

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
        questions = data.get("questions", [])
        if not isinstance(questions, list) or not all(isinstance(q, dict) for q in questions):
            raise TypeError("'questions' must be a list of objects")
        data["questions"] = [Question(**q) for q in questions]
        return cls(**data)

    def save(self, path: str | Path | None = None) -> Path:
        target = Path(path) if path else default_checklist_path(self.task)
        make_dirs(target.parent)  # no symlink followed, one line on a full or read-only disk
        write_file_atomic(target, json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n")
        return target

    @classmethod
    def load(cls, task: str | TaskSpec, path: str | Path | None = None) -> Checklist:
        """Read `path` (default `checklists/<task>.json`) and check it was built for this declaration."""
        spec = load_task(task)
        source = Path(path) if path else default_checklist_path(spec)
        if not source.is_file():
            raise DataError(
                f"no checklist at {source}: build it with `cejudge checklist build --task {spec.name}`"
            )
        fix = f"rebuild it with `cejudge checklist build --task {spec.name}`"
        data = read_json(source, lambda line: DataError(f"{line}: not a checklist file; {fix}"))
        try:
            if not isinstance(data, dict):
                raise TypeError(f"a JSON {type(data).__name__}, not an object")
            checklist = cls.from_dict(data)
        except (ValueError, TypeError) as exc:
            raise DataError(
                f"{source}: not a checklist file ({' '.join(str(exc).split())[:160]}); "
                f"rebuild it with `cejudge checklist build --task {spec.name}`"
            ) from None
        checklist.check(source)
        checklist.matches(spec)
        return checklist

    def check(self, source: Path | str) -> None:
        """Refuse question entries that are not text, and a checklist that would ask nothing."""
        for n, q in enumerate(self.questions, 1):
            for attr in ("text", "dimension", "subdimension"):
                value = getattr(q, attr)
                if not isinstance(value, str) or not value.strip():
                    raise DataError(
                        f"{source}: question {n} has no text '{attr}' (got {value!r}); "
                        "fix the entry or rebuild the checklist"
                    )
            for attr in ("kept", "reviewed"):
                if not isinstance(getattr(q, attr), bool):
                    raise DataError(
                        f"{source}: question {n}: '{attr}' must be true or false, got {getattr(q, attr)!r}"
                    )
            if q.review_note is not None and not isinstance(q.review_note, str):
                raise DataError(f"{source}: question {n}: 'review_note' must be text or null")
        if not self.kept():
            raise DataError(
                f"{source}: no question is kept, so CheckEval would ask nothing; keep some questions "
                f'("kept": true) or rebuild with `cejudge checklist build --task {self.task}`'
            )


def default_checklist_path(task: str | TaskSpec) -> Path:
    """`$CEJUDGE_CHECKLISTS/<task>.json`, else the repository's `checklists/<task>.json`."""
    name = task.name if isinstance(task, TaskSpec) else task
    return folder("checklists") / f"{name}.json"


def _require_dimensions(spec: TaskSpec) -> None:
    if not spec.dimensions:
        raise TaskError(
            f"task '{spec.name}' declares no [[dimensions]]; CheckEval needs dimensions with seeds"
        )


def overwrite_hazard(path: Path) -> str | None:
    """Why a build must not overwrite `path`, or None (no file there, or an unreviewed build)."""
    if not path.exists():
        return None
    try:
        checklist = Checklist.from_dict(read_json(path, DataError))
    except (DataError, ValueError, TypeError, AttributeError):
        return "is not a checklist file this version reads"
    n = checklist.by_person()
    return f"holds a person's review ({n} question(s) kept or dropped by hand)" if n else None


def beside(path: Path) -> Path:
    """Where a build goes instead of `path`: `<name>.new.json`, else `<name>.new-2.json`, ..., the first
    path that is free or holds only an unreviewed build."""
    n = 1
    while True:
        target = path.with_name(f"{path.stem}.new{'' if n == 1 else f'-{n}'}{path.suffix}")
        if overwrite_hazard(target) is None:
            return target
        n += 1
