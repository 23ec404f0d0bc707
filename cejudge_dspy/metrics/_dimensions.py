"""CheckEval summaries per dimension: the judge's dimension scores against the human ones.

One row per dimension, at sample level and per document (group), and an `overall` row: the item score
against the mean human score over the declared dimensions, sample level only. Kept apart from
_summary.py because only tasks that declare dimensions reach it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cejudge_dspy.metrics._correlations import CORRELATIONS
from cejudge_dspy.metrics._result import MetricResult
from cejudge_dspy.runs import Record
from cejudge_dspy.tasks import TaskSpec


def dimension_table(rows: Sequence[Record], spec: TaskSpec) -> dict[str, Any]:
    """Per dimension: sample-level and per-document Spearman, Kendall and Pearson with humans."""
    from cejudge_dspy.metrics._checkeval import per_group_correlation

    table: dict[str, Any] = {}
    for dim in spec.dimensions:
        preds, golds, groups = [], [], []
        for r in rows:
            label = r.item.label
            if not isinstance(label, dict) or dim.human_key not in label:
                continue
            scores = r.result.dimension_scores if r.result is not None and r.status == "ok" else {}
            preds.append(scores.get(dim.name))
            golds.append(label[dim.human_key])
            groups.append(r.item.group or r.id)
        row: dict[str, Any] = {"n": len(preds)}
        for name, fn in CORRELATIONS.items():
            row[name] = fn(preds, golds).to_dict()
            per_doc = per_group_correlation(preds, golds, groups, name)
            row[f"{name}_per_document"] = per_doc.to_dict() if isinstance(per_doc, MetricResult) else per_doc
        table[dim.name] = row
    if overall := _overall_row(rows, spec):
        table["overall"] = overall
    return table


def _overall_row(rows: Sequence[Record], spec: TaskSpec) -> dict[str, Any] | None:
    """The item score (share of Yes over all questions) against the mean human score over the declared
    dimensions; items whose label lacks a dimension are left out (a partial mean is another scale)."""
    from cejudge_dspy.metrics._checkeval import mean_human_score

    keys = [dim.human_key for dim in spec.dimensions]
    preds, golds = [], []
    for r in rows:
        if isinstance(r.item.label, dict) and (gold := mean_human_score(r.item.label, keys)) is not None:
            preds.append(r.result.score if r.result is not None and r.status == "ok" else None)
            golds.append(gold)
    if not preds:
        return None
    return {"n": len(preds), **{name: fn(preds, golds).to_dict() for name, fn in CORRELATIONS.items()}}
