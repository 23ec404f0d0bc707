"""`bench_embedded.py --concurrency N`: seconds per judgment when N items are judged at once.

One judgment alone ends in calls that nothing runs beside (a pointwise judgment's last call is its score),
so the batched engine's spare decode rows go unused. An evaluation keeps N items in flight (`cejudge
evaluate --concurrency N`) and fills them. Per configuration and task, the items are judged in groups of N
on one fresh engine per group (loaded before the clock starts, as in the one-at-a-time runs), and the
figure is the groups' wall time over the items: what a judgment costs inside a run. The serial engines
(`before`, `serial`) take one call at a time whatever N is; they are timed the same way.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import dspy

from cejudge_dspy.backbones import make_lm, preferred_adapter
from cejudge_dspy.judges import build_program


async def _judge_all(program: dspy.Module, items: list[dict[str, Any]]) -> list[dspy.Prediction]:
    return await asyncio.gather(
        *(program.acall(**{k: v for k, v in it.items() if k not in ("id", "label")}) for it in items)
    )


def judge_group(
    program: dspy.Module, items: list[dict[str, Any]], lm_options: dict[str, Any], meter: Callable[[Any], Any]
) -> tuple[list[dspy.Prediction], float]:
    """The items judged at once on a new engine (`meter(lm)` loads and meters it, as the one-at-a-time
    benchmark does): their predictions and the wall time."""
    lm = make_lm("embedded", cache=False, **lm_options)
    meter(lm)
    try:
        with dspy.context(lm=lm, adapter=preferred_adapter("embedded")):
            start = time.perf_counter()
            preds = asyncio.run(_judge_all(program, items))
            return preds, time.perf_counter() - start
    finally:
        lm.engine.close()


def run_together(
    tasks: dict[str, list[dict[str, Any]]],
    configs: dict[str, dict[str, Any]],
    n: int,
    meter: Callable[[Any], Any],
) -> list[dict[str, Any]]:
    """Per task and configuration, groups of `n` items judged at once; one row per group. `meter` is the
    caller's engine meter (bench_embedded.py's `Meter`), passed in so this module imports nothing back."""
    rows: list[dict[str, Any]] = []
    for task, items in tasks.items():
        if len(items) < 2:
            continue  # a group of one is the one-at-a-time figure
        programs = {name: build_program(task, "cejudge", **cfg["program"]) for name, cfg in configs.items()}
        for start in range(0, len(items), n):
            group = items[start : start + n]
            for name, cfg in configs.items():  # interleaved, as the one-at-a-time runs are
                preds, seconds = judge_group(programs[name], group, cfg["lm"], meter)
                results = [p.result for p in preds]
                rows.append(
                    {"config": name, "task": task, "ids": [it["id"] for it in group], "seconds": seconds,
                     "statuses": [r.status for r in results], "verdicts": [r.verdict for r in results],
                     "scores": [r.score for r in results]}
                )  # fmt: skip
                print(
                    f"{name[:16]:16} {task:8} {len(group)} items at once {seconds:7.1f} s  "
                    f"({seconds / len(group):.1f} s per judgment)",
                    flush=True,
                )
    return rows


def report_together(rows: list[dict[str, Any]], names: list[str], n: int) -> None:
    """Seconds per judgment inside a run of `n` items at once, and the speed-up over `before`."""
    if not rows:
        return
    print(f"\n== per judgment, {n} items at once (as `cejudge evaluate --concurrency {n}`)")
    for task in ("chat", "literary"):
        per = {
            name: sum(r["seconds"] for r in rs) / sum(len(r["ids"]) for r in rs)
            for name in names
            if (rs := [r for r in rows if r["task"] == task and r["config"] == name])
        }
        if "before" not in per:
            continue
        kind = "pairwise (both orders)" if task == "chat" else "pointwise"
        items = sum(len(r["ids"]) for r in rows if r["task"] == task and r["config"] == "before")
        for name in names[1:]:
            print(f"{kind:24} before {per['before']:6.1f} s/item · {name} {per[name]:6.1f} s/item · "
                  f"speed-up {per['before'] / per[name]:.2f}x (n = {items})")  # fmt: skip
