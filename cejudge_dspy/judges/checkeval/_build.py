"""CheckEval's checklist: built once per task, saved, reviewed by a person, then used to judge every item.

  seed yes/no questions per sub-dimension (declared in programs/<task>.toml; Yes always means better)
  -> diversify | elaborate                 (per sub-dimension, all at once, each from the seeds only)
  -> exact repeats dropped, then one LLM filter call per sub-dimension over the generated questions,
     the sub-dimensions of a dimension in turn, each shown every question the dimension already holds
  -> Checklist: every question with its origin, kept or dropped and why -> checklists/<task>.json

Seeds are human-written, so they are always kept; the filter only judges generated questions. A failed
filter call is retried once, one candidate per call; a candidate still without a decision is recorded as
"filter_failed" (left out until a person keeps it with `cejudge checklist review`), and the failure with
the retry's outcome goes into `Checklist.failures`. Stage attributes of `ChecklistBuilder` (`diversify`,
`elaborate`, `filter`) key its saved state. The stages live in _stages.py, the `Checklist` data in
_checklist.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

import dspy

from cejudge_dspy.judges._machinery._stage import Stage, StageFailure
from cejudge_dspy.judges._machinery._sync_bridge import run_sync
from cejudge_dspy.judges.checkeval._checklist import Checklist, Question, _require_dimensions
from cejudge_dspy.judges.checkeval._stages import Diversify, Elaborate, Filter, subdimension_inputs
from cejudge_dspy.tasks import Dimension, SubDimension, TaskSpec, load_task

Generated = list[tuple[str, str]]  # (question text, origin)


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
        groups = await asyncio.gather(*(self._dimension(spec, d, augment, failures) for d in spec.dimensions))
        lm = dspy.settings.lm
        return Checklist(
            spec.name,
            spec.version,
            [q for g in groups for q in g],
            augmented=augment,
            built_with=str(getattr(lm, "model", "")) if augment and lm else "",
            failures=dict(sorted(failures.items())),
        )

    async def _dimension(
        self, spec: TaskSpec, dim: Dimension, augment: bool, failures: dict[str, str]
    ) -> list[Question]:
        seeds = {s.name: [Question(t, dim.name, s.name, "seed") for t in s.seeds] for s in dim.subdimensions}
        if not augment:
            return [q for s in dim.subdimensions for q in seeds[s.name]]
        generated = await asyncio.gather(*(self._augment(spec, dim, s, failures) for s in dim.subdimensions))
        # Redundancy is judged across the whole dimension, not within one sub-dimension: the filter of each
        # sub-dimension sees every seed of the dimension and what earlier sub-dimensions kept, so the
        # sub-dimensions are filtered in turn. Exact repeats (case, spacing, end punctuation) need no LLM.
        accepted = [t for s in dim.subdimensions for t in s.seeds]
        questions: list[Question] = []
        for sub, gen in zip(dim.subdimensions, generated, strict=True):
            # Not what earlier sub-dimensions dropped: off one sub-dimension may be on this one.
            seen = {_norm(t) for t in accepted}
            dropped, candidates = [], []
            for text, origin in gen:
                if _norm(text) in seen:
                    dropped.append(Question(text, dim.name, sub.name, origin, False, "duplicate"))  # type: ignore[arg-type]
                else:
                    seen.add(_norm(text))
                    candidates.append((text, origin))
            inputs = subdimension_inputs(spec, dim, sub)
            decisions = await self._filter(inputs, accepted, candidates, f"{dim.name}/{sub.name}", failures)
            reviewed = [
                Question(text, dim.name, sub.name, origin, d == "keep", None if d == "keep" else d)  # type: ignore[arg-type]
                for (text, origin), d in zip(candidates, decisions, strict=True)
            ]
            accepted += [q.text for q in reviewed if q.kept]
            questions += seeds[sub.name] + reviewed + dropped
        return questions

    async def _augment(
        self, spec: TaskSpec, dim: Dimension, sub: SubDimension, failures: dict[str, str]
    ) -> Generated:
        where = f"{dim.name}/{sub.name}"
        inputs = {**subdimension_inputs(spec, dim, sub), "seeds": list(sub.seeds)}
        # Both augmentations start from the seeds alone, as the method prescribes, so they run at once.
        div, ela = await asyncio.gather(
            self._try(self.diversify, inputs, where, failures),
            self._try(self.elaborate, inputs, where, failures),
        )
        generated = [(t, "diversified") for t in (div.diversified if div else [])]
        return generated + [(t, "elaborated") for t in (ela.elaborated if ela else [])]

    async def _filter(
        self,
        inputs: dict[str, Any],
        accepted: list[str],
        candidates: Generated,
        where: str,
        failures: dict[str, str],
    ) -> list[str]:
        """One decision per candidate: one call for all; when it fails, once more with one candidate per
        call (a list of one cannot misalign, the usual failure). "filter_failed" where both failed."""
        if not candidates:
            return []
        try:
            pred = await self.filter.acall(**inputs, accepted=accepted, candidates=[t for t, _ in candidates])
            return list(pred.decisions)
        except StageFailure as failure:
            first = failure.reason
        decisions, known, last = [], list(accepted), ""
        for text, _ in candidates:  # in turn: a candidate kept here is "accepted" for the next one
            try:
                decision = (await self.filter.acall(**inputs, accepted=known, candidates=[text])).decisions[0]
            except StageFailure as failure:
                decision, last = "filter_failed", failure.reason
            decisions.append(decision)
            known += [text] if decision == "keep" else []
        unreviewed = decisions.count("filter_failed")
        outcome = f"{len(candidates) - unreviewed} of {len(candidates)} reviewed"
        if unreviewed:
            outcome += f", {unreviewed} left unreviewed (filter_failed; last: {last})"
        failures[f"{where} Filter"] = f"{first}; retried one candidate per call: {outcome}"
        return decisions

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
