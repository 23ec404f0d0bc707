"""CheckEval's checklist: built once per task, saved, reviewed by a person, then used to judge every item.

  seed yes/no questions per sub-dimension (declared in programs/<task>.toml; Yes always means better)
  -> diversify | elaborate                 (per sub-dimension, both at once, each from the seeds only)
  -> exact repeats dropped, then one LLM filter call per sub-dimension over the generated questions
  -> Checklist: every question with its origin, kept or dropped and why -> checklists/<task>.json

Seeds are human-written, so they are always kept; the filter only judges generated questions. Stage
attributes of `ChecklistBuilder` (`diversify`, `elaborate`, `filter`) key its saved state. The stages
live in stages.py, the `Checklist` data in checklist.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

import dspy

from cejudge_dspy.methods.checkeval.checklist import (
    Checklist,
    Question,
    _require_dimensions,
)
from cejudge_dspy.methods.checkeval.stages import (
    Diversify,
    Elaborate,
    Filter,
    subdimension_inputs,
)
from cejudge_dspy.methods.stages import Stage, StageFailure
from cejudge_dspy.sync import run_sync
from cejudge_dspy.tasks import Dimension, SubDimension, TaskSpec, load_task


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
        inputs = {**subdimension_inputs(spec, dim, sub), "seeds": list(sub.seeds)}
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


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip("?.! ")
