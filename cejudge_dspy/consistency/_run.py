"""Judging a consistency run: the renderings first, then each (rendering, method) child run with the
ordinary runner, then the summary. Everything written is kept as it comes, so a rerun resumes where the
last one stopped: renderings from the file, each child from its own results.jsonl."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cejudge_dspy.consistency._layout import (
    ORIGINAL_RUN,
    RENDERINGS,
    child_name,
    open_consistency,
)
from cejudge_dspy.consistency._renderings import Rendering, render_items, rendered_item
from cejudge_dspy.consistency._summary import summarize_consistency
from cejudge_dspy.data import Item
from cejudge_dspy.evaluate import judge_items
from cejudge_dspy.metrics import summarize
from cejudge_dspy.runs import (
    RESULTS,
    SUMMARY,
    Record,
    item_ids,
    lock,
    pending_items,
    prepare_run_dir,
    read_records,
    read_timing,
    run_timing,
    write_summary,
)
from cejudge_dspy.tasks import TaskSpec
from cejudge_dspy.translate import Translator


@dataclass
class ConsistencyRun:
    """What one consistency run judges and where: the items, the languages (canonical codes), the methods,
    the parent's identity and, per (method, rendering), the identity its child run records."""

    out: Path
    spec: TaskSpec
    items: list[Item]
    languages: list[str]
    methods: list[str]
    identity: dict[str, Any]
    run_identity: Callable[[str, str], dict[str, Any]]
    concurrency: int = 1
    n_resamples: int = 1000
    seed: int = 42
    force_new: bool = False
    parallel: Mapping[tuple[str, str], dict[str, str]] = field(default_factory=dict)

    @property
    def renderings(self) -> list[str]:
        return [ORIGINAL_RUN, *self.languages]

    @property
    def children(self) -> list[str]:
        return [child_name(r, m) for r in self.renderings for m in self.methods]


async def judge_consistency(
    run: ConsistencyRun,
    programs: Mapping[str, Any],
    translator_for: Callable[[str], Translator],
    *,
    on_phase: Callable[[str, int], None] | None = None,
    on_rendering: Callable[[Rendering], None] | None = None,
    on_record: Callable[[Record], None] | None = None,
) -> dict[str, Any]:
    """Render, judge every child run, summarize; returns the summary written to summary.json.

    `programs` maps each method to its judge program, `translator_for(language)` builds the translator into
    a language. The caller makes the backbone current (`dspy.context`). `on_phase(what, n)` is told before
    each step how many renderings or items it has to do."""
    started = time.time()
    with lock(run.out, "cejudge consistency"):
        open_consistency(run.out, run.identity, run.children, force_new=run.force_new)
        renderings = await render_items(
            run.items,
            run.languages,
            translator_for,
            run.out / RENDERINGS,
            parallel=run.parallel,
            concurrency=run.concurrency,
            on_rendering=on_rendering,
            on_start=(lambda n: on_phase("renderings", n)) if on_phase is not None else None,
        )
        for rendering in run.renderings:
            items = _items_in(run.items, rendering, renderings)
            for method in run.methods:
                await _judge_child(run, rendering, method, items, programs[method], on_phase, on_record)
        summary = summarize_consistency(run.out, n_resamples=run.n_resamples, seed=run.seed)
        previous = read_timing(run.out / SUMMARY)
        summary["timing"] = run_timing(previous, started, time.time())
        write_summary(run.out / SUMMARY, summary)
    return summary


def _items_in(
    items: Sequence[Item], rendering: str, renderings: Mapping[tuple[str, str], Rendering]
) -> list[Item]:
    """The items of one rendering: the originals, or those whose rendering in that language exists."""
    if rendering == ORIGINAL_RUN:
        return list(items)
    out = []
    for item in items:
        made = renderings.get((item.id, rendering))
        if made is not None and made.status == "ok":
            out.append(rendered_item(item, made))
    return out


async def _judge_child(
    run: ConsistencyRun,
    rendering: str,
    method: str,
    items: list[Item],
    program: Any,
    on_phase: Callable[[str, int], None] | None,
    on_record: Callable[[Record], None] | None,
) -> None:
    """One child run, as `cejudge evaluate` would judge it: opened (or resumed) under its own lock, the
    pending items judged, its summary.json written."""
    out = run.out / child_name(rendering, method)
    config = run.run_identity(method, rendering) | {"items": item_ids([i.id for i in items])}
    started = time.time()
    with lock(out, "cejudge consistency"):
        records = prepare_run_dir(out, config)
        todo = pending_items(items, records)
        if on_phase is not None:
            on_phase(child_name(rendering, method), len(todo))
        if todo:
            await judge_items(
                todo,
                program,
                out / RESULTS,
                task=run.spec.name,
                method=method,
                concurrency=run.concurrency,
                on_record=on_record,
            )
        final = read_records(out / RESULTS)
        summary = summarize(final, run.spec, n_resamples=run.n_resamples, seed=run.seed)
        summary["run"] = config
        previous = read_timing(out / SUMMARY)
        summary["timing"] = (
            run_timing(previous, started, time.time()) if todo or previous is None else previous
        )
        write_summary(out / SUMMARY, summary)
