"""What `cejudge view` shows, as plain data: one row per item with its outcome, the filters' categories,
the pairwise confusion of verdict and gold label, judge-vs-human points, CheckEval's answer matrix,
the items on which runs disagree, and the CSV export.

Pure functions over records (typed `Record`s); the cli layer draws and renders them.
An item's outcome is one of OUTCOMES (_item_rows.py, with the table's rows, filters and CSV); the run as
the viewer reads it and its header are _run.py's. This module holds the charts' data; the package's face,
`cejudge_dspy.view`, exports what the CLI uses.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from cejudge_dspy.metrics import language_key, prediction
from cejudge_dspy.runs import Record
from cejudge_dspy.tasks import TaskSpec
from cejudge_dspy.view._item_rows import (
    _is_number,
    gold_value,
)
from cejudge_dspy.view._run import ViewRun

PAIRWISE_LABELS = ("A", "B", "tie")


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
