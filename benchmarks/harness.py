"""Run one pipeline over items with the lead's runner and measure it against its critical-path bound.

The bound comes from the simulated engine's latency model, call by call: each call is tagged with
the item it works for (`Tagged` sets the tag; the engine logs it), and an item's critical path is
the longest chain of dependent calls, level by level (concepts | translations, then checklists,
then judgments: max latency per level, summed). A dataset at concurrency N cannot finish before
max(longest item, sum of item paths / N), nor before the server's work / its slots.
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

from cejudge_dspy.backbones.simulated import CallLog, SimulatedEngine, tagged
from cejudge_dspy.evaluation.runner import judge_items
from cejudge_dspy.items import Item

LEVEL = {"concepts": 0, "translate": 0, "checklist_r2i": 1, "checklist_i2r": 1, "score": 2, "verdict": 2}


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


def critical_paths(log: Sequence[CallLog], *, sequential_orders: bool = False) -> dict[str, float]:
    """Per item: the sum over levels of the slowest call at that level.

    `sequential_orders` adds the judgments up instead of taking the slowest: the issue's bound of
    "3 calls plus one per extra order", for pipelines that judge their orders one after another.
    """
    levels: dict[str, list[list[float]]] = defaultdict(lambda: [[], [], []])
    for call in log:
        if call.stage in LEVEL and call.tag is not None:
            levels[call.tag][LEVEL[call.stage]].append(call.latency)
    out = {}
    for tag, (front, checklists, judgments) in levels.items():
        last = sum(judgments) if sequential_orders else max(judgments, default=0.0)
        out[tag] = max(front, default=0.0) + max(checklists, default=0.0) + last
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
    english: int  # translations of English texts (the paper's pipeline makes them; ours never)
    usage: dict[str, int] = field(default_factory=dict)
    by_stage: dict[str, int] = field(default_factory=dict)
    paths: dict[str, float] = field(default_factory=dict)
    seq_paths: dict[str, float] = field(default_factory=dict)  # orders one after another (the 3+1)

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
) -> Run:
    """Judge `items` with `program` through `runner.judge_items` and measure everything."""
    engine.reset()
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
        u = r.result["usage"]
        for k in ("calls", "cached", "reused", "prompt_tokens", "completion_tokens"):
            usage[k] += int(u[k])
        for stage, n in u["by_stage"].items():
            by_stage[stage] += n
    paths = critical_paths(engine.log)
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
        peak_calls=engine.peak_in_flight,
        english=sum(c.source_language == "English" for c in engine.log),
        usage=dict(usage),
        by_stage=dict(by_stage),
        paths=paths,
        seq_paths=critical_paths(engine.log, sequential_orders=True),
    )
