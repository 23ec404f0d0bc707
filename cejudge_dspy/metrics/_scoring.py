"""How one record enters a summary: the language it is reported under, its prediction, and whether it
is scored or left out (and why).

Unparsed and errored items enter the metrics as missing values, so they are excluded and counted, never
graded: `item_counts` splits a language's `items` into `scored` (the metric's n) + `unparsed` +
`gold_ties` (pairwise gold ties, which a judge that must pick a side cannot get right) + `errors` +
`no_label`. The same functions serve summaries, comparisons (_compare.py) and the viewer
(`cejudge_dspy.view`), so all three count an item the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cejudge_dspy.data import Item
from cejudge_dspy.runs import Record


def language_key(item: Item) -> str:
    """Language (pair) an item is reported under: `de-en` when source and response languages differ."""
    src, tgt = item.language or "?", item.response_language
    return f"{src}-{tgt}" if tgt and tgt != src else src


def prediction(record: Record) -> Any:
    """The judge's verdict or score, or None when it has none (unparsed or error)."""
    if record.status != "ok" or record.result is None:
        return None
    return record.result.verdict if record.result.mode == "pairwise" else record.result.score


def errored(record: Record) -> bool:
    """An item that failed with an error (retried on the next run), not with an unparsed output."""
    return record.status == "error" or (record.status == "ok" and not record.result)


def strict_golds(rows: Sequence[Record]) -> list[Any]:
    """Gold labels for `strict_accuracy`: an errored item's gold is missing, so it is left out, while an
    unparsed one (prediction None) is scored as wrong."""
    return [None if errored(r) else r.item.label for r in rows]


def item_counts(rows: Sequence[Record], abstained: frozenset[str] | None = None) -> dict[str, int]:
    """How a language's items were used: scored, or left out as unparsed, gold tie, error or unlabelled.

    Mirrors the metrics' order of exclusion (a missing prediction is checked before a gold tie), so
    `scored` equals the metric's n and the parts add up to `items`. With `abstained` (the ids a
    selective run leaves to a person; `_selective.py`) the counts add `abstained`, checked after a
    missing prediction."""
    out = {"items": len(rows), "scored": 0, "unparsed": 0, "gold_ties": 0, "errors": 0, "no_label": 0}
    if abstained is not None:
        out["abstained"] = 0
    for r in rows:
        label = r.item.label
        if errored(r):
            out["errors"] += 1
        elif r.status == "unparsed" or prediction(r) is None:
            out["unparsed"] += 1
        elif abstained is not None and r.id in abstained:
            out["abstained"] += 1
        elif label is None:
            out["no_label"] += 1
        elif isinstance(label, str) and label.strip().lower() == "tie":
            out["gold_ties"] += 1
        else:
            out["scored"] += 1
    return out
