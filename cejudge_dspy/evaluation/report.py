"""What `cejudge view` shows, as plain data: one row per item with its outcome, the filters' categories,
the pairwise confusion of verdict and gold label, judge-vs-human points, CheckEval's answer matrix,
the items on which runs disagree, and the CSV export.

Pure functions over records (typed `Record`s); the cli layer draws and renders them.
An item's outcome is one of OUTCOMES: pairwise items are correct, wrong or tie (under the argmax rule
the judge changing its mind across orders; under the probability rule p(A) inside the tie band),
"gold tie" when humans called it a tie (accuracy leaves those out) and "no gold" when the item is
unlabelled; pointwise items that were scored are "scored"; any item may be "unparsed" or "error".
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.evaluation.checkeval import mean_human_score
from cejudge_dspy.evaluation.compare import load_run
from cejudge_dspy.evaluation.runner import RESULTS, SUMMARY, Record, read_timing
from cejudge_dspy.evaluation.summary import language_key, prediction, summarize
from cejudge_dspy.results import JudgeResult
from cejudge_dspy.tasks import TaskSpec, load_task

OUTCOMES = ("correct", "wrong", "tie", "gold tie", "no gold", "scored", "unparsed", "error")
PAIRWISE_LABELS = ("A", "B", "tie")
CSV_COLUMNS = (
    "run",
    "id",
    "language",
    "gold",
    "judge",
    "verdict_AB",
    "verdict_BA",
    "status",
    "outcome",
    "error_stage",
    "seconds",
    "calls",
    "prompt_tokens",
    "completion_tokens",
)


@dataclass
class ViewRun:
    """One run directory as the viewer reads it: settings, latest record per item, task, summary."""

    name: str
    path: Path
    config: dict[str, Any]
    records: list[Record]
    spec: TaskSpec
    summary: dict[str, Any]
    last_written: str | None = None
    timing: dict[str, Any] | None = None  # from summary.json: started, finished, wall_seconds, sessions
    dimensions: list[str] = field(default_factory=list)


def load_view_run(path: Path, *, name: str | None = None, n_resamples: int = 1000) -> ViewRun:
    """Read a run directory and summarize it afresh (the summary of exactly the records shown)."""
    config, records = load_run(path)
    task = config.get("task") or (records[0].task if records else None)
    if not task:
        raise CEJudgeError(f"{path}: neither run.json nor a record names the task")
    spec = load_task(task)
    records = sorted(records, key=lambda r: r.id)
    mtime = (path / RESULTS).stat().st_mtime
    return ViewRun(
        name=name or path.resolve().name,
        path=path,
        config=config,
        records=records,
        spec=spec,
        summary=summarize(records, spec, n_resamples=n_resamples),
        last_written=datetime.fromtimestamp(mtime, tz=timezone.utc).isoformat(timespec="seconds"),
        timing=read_timing(path / SUMMARY),
        dimensions=[d.name for d in spec.dimensions],
    )


def gold_value(record: Record, spec: TaskSpec) -> Any:
    """The gold label as one value: "A"/"B"/"tie", a number, or the mean human score over the task's
    dimensions for a per-dimension label (None when unlabelled or a dimension is missing)."""
    label = record.item.label
    if isinstance(label, Mapping):
        return mean_human_score(label, [d.human_key for d in spec.dimensions] or list(label))
    return label


def outcome(record: Record) -> str:
    """The item's category in OUTCOMES (see the module docstring)."""
    if record.status in ("unparsed", "error"):
        return record.status
    result = record.result
    if result is None:
        return "error"
    if result.mode != "pairwise":
        return "scored"
    if result.verdict == "tie":
        return "tie"
    gold = record.item.label
    if gold == "tie":
        return "gold tie"
    if gold not in ("A", "B"):
        return "no gold"
    return "correct" if result.verdict == gold else "wrong"


def item_row(record: Record, spec: TaskSpec, run: str = "") -> dict[str, Any]:
    """The table's (and the CSV's) row for one record."""
    result = record.result
    orders = {o.order: o.verdict for o in result.orders} if result else {}
    usage = result.usage if result else None
    row: dict[str, Any] = {
        "run": run,
        "id": record.id,
        "language": language_key(record.item),
        "gold": gold_value(record, spec),
        "judge": prediction(record),
        "verdict_AB": orders.get("AB"),
        "verdict_BA": orders.get("BA"),
        "status": record.status,
        "outcome": outcome(record),
        "error_stage": result.error_stage if result else None,
        "seconds": record.seconds,
        "calls": usage.calls if usage else 0,
        "prompt_tokens": usage.prompt_tokens if usage else 0,
        "completion_tokens": usage.completion_tokens if usage else 0,
    }
    for dim in spec.dimensions:
        row[f"score_{dim.name}"] = result.dimension_scores.get(dim.name) if result else None
    if result is not None and result.probabilities is not None:
        row.update(probability_columns(result))
    return row


def probability_columns(result: JudgeResult) -> dict[str, Any]:
    """A record judged with token probabilities: the rule that decided it, the argmax answer kept beside
    the headline, and (where read) p(A) with its confidence, or the expected score."""
    probs, kept = result.probabilities, result.argmax
    ok = probs is not None and probs.ok
    kept_or_headline = kept or result  # a record decided by the argmax before `argmax` was kept
    argmax = kept_or_headline.verdict if result.mode == "pairwise" else kept_or_headline.score
    out: dict[str, Any] = {"decided_by": result.decision, "argmax": argmax}
    if result.mode == "pairwise":
        out["p_A"] = probs.p_a if ok else None
        out["confidence"] = probs.confidence if ok else None
    else:
        out["expected_score"] = probs.score if ok else None
    return out


def item_rows(records: Sequence[Record], spec: TaskSpec, run: str = "") -> list[dict[str, Any]]:
    return [item_row(r, spec, run) for r in records]


def csv_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """CSV of item rows: CSV_COLUMNS, then any per-dimension score columns, in first-seen order.
    None is an empty cell; numbers are written as Python writes them."""
    extra = [k for row in rows for k in row if k not in CSV_COLUMNS]
    columns = [*CSV_COLUMNS, *dict.fromkeys(extra)]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if row.get(k) is None else row.get(k) for k in columns})
    return buf.getvalue()


def filter_options(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the filters offer: the languages present, the outcomes present (in OUTCOMES order) with
    their counts, and the range of numeric judge scores (None when there are none)."""
    counts = {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES}
    scores = [r["judge"] for r in rows if _is_number(r["judge"])]
    return {
        "languages": sorted({r["language"] for r in rows}),
        "outcomes": {o: n for o, n in counts.items() if n},
        "score_range": [min(scores), max(scores)] if scores else None,
    }


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def confusion(records: Sequence[Record]) -> dict[str, Any]:
    """Pairwise: counts of gold label (rows: A, B, tie) against the judge's verdict (columns: A, B, tie,
    and "none" for unparsed or errored items). Unlabelled items are left out."""
    cols = [*PAIRWISE_LABELS, "none"]
    counts = [[0] * len(cols) for _ in PAIRWISE_LABELS]
    for r in records:
        gold = r.item.label
        if gold not in PAIRWISE_LABELS:
            continue
        pred = prediction(r)
        counts[PAIRWISE_LABELS.index(gold)][cols.index(pred if pred in PAIRWISE_LABELS else "none")] += 1
    return {"gold": list(PAIRWISE_LABELS), "verdict": cols, "counts": counts}


def judge_vs_human(records: Sequence[Record], spec: TaskSpec) -> list[dict[str, Any]]:
    """Pointwise: one point per scored, labelled item (judge score, gold value, language)."""
    points = []
    for r in records:
        judge, gold = prediction(r), gold_value(r, spec)
        if _is_number(judge) and _is_number(gold):
            points.append({"id": r.id, "language": language_key(r.item), "judge": judge, "human": gold})
    return points


def answer_matrix(records: Sequence[Record]) -> dict[str, Any]:
    """CheckEval: questions x items. Questions in first-seen order (keyed by dimension and text), items
    in record order; each cell is "yes", "no" or None (unanswered, or the item has no such question)."""
    questions: dict[tuple[str, str], dict[str, Any]] = {}
    index: dict[tuple[str, str], int] = {}
    cells: dict[tuple[int, str], str | None] = {}
    items = []
    for r in records:
        result = r.result
        answers = (result.details.get("answers") if result else None) or []
        if not answers:
            continue
        items.append(r.id)
        for a in answers:
            key = (a.get("dimension", ""), a.get("question", ""))
            if key not in questions:
                index[key] = len(questions)
                questions[key] = {
                    "dimension": key[0],
                    "subdimension": a.get("subdimension", ""),
                    "question": key[1],
                }
            answer = a.get("answer")
            cells[(index[key], r.id)] = str(answer).lower() if answer is not None else None
    return {
        "questions": list(questions.values()),
        "items": items,
        "cells": [{"q": q, "item": i, "answer": a} for (q, i), a in cells.items()],
    }


def disagreements(runs: Sequence[ViewRun]) -> list[dict[str, Any]]:
    """Items present in every run on which the runs' verdicts or scores differ (a missing prediction,
    unparsed or error, counts as a value of its own), in id order."""
    by_run = [{r.id: r for r in run.records} for run in runs]
    common = sorted(set.intersection(*(set(b) for b in by_run))) if by_run else []
    out = []
    for item_id in common:
        preds = [prediction(b[item_id]) for b in by_run]
        if len({json.dumps(p) for p in preds}) > 1:
            first = by_run[0][item_id]
            out.append(
                {
                    "id": item_id,
                    "language": language_key(first.item),
                    "gold": gold_value(first, runs[0].spec),
                    "predictions": dict(zip([run.name for run in runs], preds, strict=True)),
                }
            )
    return out


def overview(run: ViewRun) -> dict[str, Any]:
    """The run's header: task, method, backbone, program, all settings, counts, time and usage."""
    s = run.summary
    usage = s.get("usage", {})
    return {
        "name": run.name,
        "path": str(run.path),
        "task": run.spec.name,
        "mode": run.spec.mode,
        "metric": run.spec.metric,
        "method": run.config.get("method") or ", ".join(s.get("methods", [])),
        "backbone": run.config.get("lm"),
        "program": run.config.get("program"),
        "decision": decision_rule(run),
        "settings": run.config,
        "last_written": run.last_written,
        "timing": run.timing,
        "item_seconds": round(sum(r.seconds for r in run.records), 3),
        "n_items": s["n_items"],
        "n_ok": s["n_ok"],
        "n_unparsed": s["n_unparsed"],
        "n_error": s["n_error"],
        "calls": usage.get("calls", 0),
        "cached": usage.get("cached", 0),
        "prompt_tokens": usage.get("prompt_tokens", 0),
        "completion_tokens": usage.get("completion_tokens", 0),
    }


def decision_rule(run: ViewRun) -> dict[str, Any]:
    """The run's decision rule (run.json; a run from before the rule was decided by the argmax), its tie
    band, and how many records each rule decided (the probability rule keeps the argmax where a record
    has no probabilities)."""
    rules = run.summary.get("decision_rules") or {}
    return {
        "rule": run.config.get("decision") or "argmax",
        "tie_band": run.config.get("tie_band") if run.spec.mode == "pairwise" else None,
        "decided_by": rules.get("decided_by"),
        "probabilities": rules.get("probabilities"),
    }
