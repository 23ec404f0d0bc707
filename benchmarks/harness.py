"""Run one pipeline over items with the lead's runner and measure it against its critical-path bound.

The bound comes from the simulated engine's latency model, call by call: each call is tagged with
the item it works for (`Tagged` sets the tag; the engine logs it, and what the call works on: the
instruction, response A or B), and an item's critical path is its longest chain of dependent calls:
- cejudge's judges: for each response, the slowest of the instruction's and the response's concepts and
  translations (the checklists wait for all four), then the slower of its two checklists, then its grade
  (the graded judgment); the slowest response's chain, then the slowest judgment (the orders run at
  once; with grades, the pairwise judgment is the tie-breaker after both);
- a sequential pipeline (the paper's code): every call of the item, one after another, summed;
external translation requests (SimulatedExternalTranslator) count like calls. A dataset at concurrency N
cannot finish before max(longest item, sum of item paths / N), nor before the server's work / its slots.
A shared call is logged for the item that issued it, so items that reuse it get a shorter path and
the bound is, if anything, optimistic: the ratio wall/bound errs high, never flattering.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dspy

from cejudge_dspy.backbones import SimulatedEngine
from cejudge_dspy.backbones._simulated import CallLog, tagged
from cejudge_dspy.data import Item
from cejudge_dspy.evaluate import judge_items

FRONT = {"concepts", "translate", "external_translate"}
CHECKLISTS = {"checklist_r2i", "checklist_i2r"}
GRADES = {"grade"}
JUDGMENTS = {"score", "verdict"}


def _key(inputs: dict[str, Any]) -> str:
    return json.dumps(inputs, sort_keys=True, ensure_ascii=False)


class Tagged(dspy.Module):
    """Wraps a judge: tags its LM calls with the item id and counts the items in flight."""

    def __init__(self, program: dspy.Module, items: Sequence[Item]) -> None:
        super().__init__()
        self.program = program
        self.ids = {_key(item.inputs()): item.id for item in items}
        self.in_flight = self.peak_items = 0

    async def aforward(self, **inputs: Any) -> dspy.Prediction:
        self.in_flight += 1
        self.peak_items = max(self.peak_items, self.in_flight)
        try:
            with tagged(self.ids.get(_key(inputs), "?")):
                return await self.program.acall(**inputs)
        finally:
            self.in_flight -= 1


def critical_paths(log: Sequence[CallLog], *, sequential: bool = False) -> dict[str, float]:
    """Per item (call tag), the latency of its longest chain of dependent calls (module docstring)."""
    by_tag: dict[str, list[CallLog]] = defaultdict(list)
    for call in log:
        if call.tag is not None:
            by_tag[call.tag].append(call)
    out = {}
    for tag, calls in by_tag.items():
        if sequential:
            out[tag] = sum(c.latency for c in calls)
            continue
        front: dict[str | None, float] = defaultdict(float)
        checklists: dict[str | None, float] = defaultdict(float)
        grades: dict[str | None, float] = defaultdict(float)
        judgment = 0.0
        for c in calls:
            if c.stage in FRONT:
                front[c.which] = max(front[c.which], c.latency)
            elif c.stage in CHECKLISTS:
                checklists[c.which] = max(checklists[c.which], c.latency)
            elif c.stage in GRADES:
                grades[c.which] = max(grades[c.which], c.latency)
            elif c.stage in JUDGMENTS:
                judgment = max(judgment, c.latency)
        responses = set(checklists) | set(grades) | {w for w in front if w != "instruction"}
        chains = [max(front["instruction"], front[r]) + checklists[r] + grades[r] for r in responses]
        out[tag] = max(chains, default=front["instruction"]) + judgment
    return out


def dataset_bound(
    paths: dict[str, float], concurrency: int, log: Sequence[CallLog], slots: int | None
) -> float:
    """The least wall time in which `concurrency` item slots (and the server's slots) can do this work."""
    if not paths:
        return 0.0
    bound = max(max(paths.values()), sum(paths.values()) / concurrency)
    if slots:
        bound = max(bound, sum(c.latency for c in log) / slots)
    return bound


@dataclass
class Run:
    """What one pipeline did at one concurrency."""

    pipeline: str
    concurrency: int
    n: int
    wall: float
    engine_calls: int
    prompt_tokens: int
    output_tokens: int
    latency: float  # mean seconds one item took, as the runner recorded it
    bound: float
    peak_items: int
    peak_calls: int
    english: int  # LLM translations of English texts (only the seq-llm baseline makes them)
    external: int = 0  # requests to the simulated external translator
    usage: dict[str, int] = field(default_factory=dict)
    by_stage: dict[str, int] = field(default_factory=dict)
    paths: dict[str, float] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return self.wall / self.bound if self.bound else float("nan")


def run(
    pipeline: str,
    program: dspy.Module,
    items: Sequence[Item],
    lm: dspy.LM,
    engine: SimulatedEngine,
    concurrency: int,
    *,
    task: str,
    sequential: bool = False,
) -> Run:
    """Judge `items` with `program` through `runner.judge_items` and measure everything; `sequential`:
    the program awaits every call after the previous one (the paper's pipeline)."""
    engine.reset()
    translator = getattr(program, "translator", None)
    if hasattr(translator, "reset"):
        translator.reset()
    wrapped = Tagged(program, items)
    with tempfile.TemporaryDirectory(prefix="cejudge-bench-") as tmp, dspy.context(lm=lm):
        start = time.perf_counter()
        records = asyncio.run(
            judge_items(
                items,
                wrapped,
                Path(tmp) / "results.jsonl",
                task=task,
                method=pipeline,
                concurrency=concurrency,
            )
        )
        wall = time.perf_counter() - start
    bad = [r for r in records if r.status != "ok"]
    if bad:
        raise RuntimeError(f"{pipeline}: {len(bad)} items not ok, e.g. {bad[0].status}: {bad[0].error}")
    usage: dict[str, int] = defaultdict(int)
    by_stage: dict[str, int] = defaultdict(int)
    for r in records:
        u = r.result.usage
        for k in ("calls", "cached", "reused", "prompt_tokens", "completion_tokens"):
            usage[k] += int(getattr(u, k))
        for stage, n in u.by_stage.items():
            by_stage[stage] += n
    external = list(getattr(translator, "log", []))
    log = [*engine.log, *external]
    paths = critical_paths(log, sequential=sequential)
    return Run(
        pipeline=pipeline,
        concurrency=concurrency,
        n=len(items),
        wall=wall,
        engine_calls=engine.calls,
        prompt_tokens=sum(c.prompt_tokens for c in engine.log),
        output_tokens=sum(c.output_tokens for c in engine.log),
        latency=statistics.fmean(r.seconds for r in records),
        peak_items=wrapped.peak_items,
        bound=dataset_bound(paths, concurrency, engine.log, engine.max_concurrency),
        external=len(external),
        peak_calls=engine.peak_in_flight,
        english=sum(c.source_language == "English" for c in engine.log),
        usage=dict(usage),
        by_stage=dict(by_stage),
        paths=paths,
    )
