"""How far CheckEval scores agree: with human labels within each document, and between repeated runs.

Pure functions over scores and results; nothing here calls a model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from cejudge_dspy.errors import InputError
from cejudge_dspy.judges.verdicts import JudgeResult
from cejudge_dspy.metrics._agreement import fleiss_kappa_from_labels, krippendorff_alpha
from cejudge_dspy.metrics._correlations import CORRELATIONS
from cejudge_dspy.metrics._result import MetricResult, check_aligned, is_missing, undefined_result
from cejudge_dspy.runs import Record


def _correlation(method: str) -> Callable[[Sequence[object], Sequence[object]], MetricResult]:
    """The correlation named `method`; InputError naming the choices when there is none."""
    if method not in CORRELATIONS:
        raise InputError(f"unknown method {method!r}; use {', '.join(CORRELATIONS)}", field="method")
    return CORRELATIONS[method]


def per_group_correlation(
    scores: Sequence[object],
    humans: Sequence[object],
    groups: Sequence[Hashable | None],
    method: str = "spearman",
) -> MetricResult:
    """The CheckEval paper's document-level correlation: computed within each group, then averaged.

    Shapes: three item-aligned sequences; `groups` holds e.g. the document id of each system output.
    Items missing a score, a human value or a group are excluded (`extra["n_items_missing"]`). A group
    whose correlation is undefined (fewer than 2 items, or constant scores or human values on either side,
    which a share of Yes over few questions produces easily) is left out of the average, as the paper's
    reference code does, and counted in `n_excluded`; `n` is the number of groups averaged. With no
    defined group the value is NaN with a reason (the reference code reports 0 there).
    """
    correlate = _correlation(method)
    s, h, g = check_aligned([scores, humans, groups], ["scores", "humans", "groups"])
    by_group: dict[Hashable, tuple[list[object], list[object]]] = {}
    missing = 0
    for x, y, key in zip(s, h, g, strict=True):
        if is_missing(x) or is_missing(y) or key is None:
            missing += 1
            continue
        xs, ys = by_group.setdefault(key, ([], []))
        xs.append(x)
        ys.append(y)
    results = [correlate(xs, ys) for xs, ys in by_group.values()]
    values = [r.value for r in results if r.defined]
    name = f"{method}_per_group"
    extra = {"n_groups": len(by_group), "n_items_missing": missing}
    if not values:
        return undefined_result(
            name,
            0,
            len(by_group),
            "no group has a defined correlation (each needs 2+ items and varying scores and human values)",
            **extra,
        )
    return MetricResult(
        name, sum(values) / len(values), len(values), len(by_group) - len(values), extra=extra
    )


def checkeval_agreement(
    run_results: Sequence[Sequence[Any]],
    *,
    humans: Sequence[object] | Mapping[str, object] | None = None,
    human_key: str | None = None,
    dimension: str | None = None,
    method: str = "spearman",
) -> dict[str, Any]:
    """Agreement of several runs (backbones, repeats) over the same items: raters = runs, units = items.

    A run is a list of JudgeResults, their `to_dict()`s, or runner records (`runs.Record` or its dict:
    "id", "item" with its "label", "result"; a missing result counts as unparsed). Items align by "id"
    when every row has one, else by position. Returns:
    - `krippendorff_alpha`: interval alpha on the overall score (or on `dimension_scores[dimension]`);
      unparsed = missing.
    - `fleiss_kappa`: on the per-question yes/no answers in `details["answers"]` (those of `dimension`
      when given); a question counts only when every run answered it.
    - `human_correlation`: each run's correlation with the human labels and its spread (min, max, mean,
      sample std over the runs with a defined value), or None without labels.
    Labels come from the records or from `humans` (aligned to the items, or id -> label); a dict label is
    read at `human_key`, else at `dimension`. Metric values are `MetricResult.to_dict()`s.
    """
    if not run_results:
        raise InputError("needs at least one run", field="run_results")
    rows = [[_row(r) for r in run] for run in run_results]
    if all(rid is not None for run in rows for rid, _, _ in run):
        keys: list[Hashable] = list(dict.fromkeys(rid for run in rows for rid, _, _ in run))
        tables = [{rid: (res, lab) for rid, res, lab in run} for run in rows]
    else:
        if len({len(run) for run in rows}) > 1:
            raise InputError("runs have different lengths and no item ids to align them", field="run_results")
        keys = list(range(len(rows[0])))
        tables = [{i: (res, lab) for i, (_, res, lab) in enumerate(run)} for run in rows]
    results = [[t.get(k, ({}, None))[0] for k in keys] for t in tables]
    scores = [[_value(res, dimension) for res in run] for run in results]
    answers = [
        {
            (k, a["dimension"], a["subdimension"], a["question"]): a["answer"]
            for k, res in zip(keys, run, strict=True)
            for a in res.get("details", {}).get("answers", [])
            if dimension is None or a.get("dimension") == dimension
        }
        for run in results
    ]
    units = list(dict.fromkeys(u for run in answers for u in run))
    kappa = (
        fleiss_kappa_from_labels([[run.get(u) for u in units] for run in answers], categories=("yes", "no"))
        if units
        else undefined_result("fleiss_kappa", 0, 0, "no per-question answers")
    )
    labels = [next((t[k][1] for t in tables if k in t and t[k][1] is not None), None) for k in keys]
    if humans is not None:
        labels = [
            humans.get(k) if isinstance(humans, Mapping) else humans[i]  # type: ignore[call-overload]
            for i, k in enumerate(keys)
        ]
    gold = [_gold(label, human_key or dimension) for label in labels]
    return {
        "n_runs": len(rows),
        "n_items": len(keys),
        "krippendorff_alpha": krippendorff_alpha(scores, level="interval").to_dict(),
        "fleiss_kappa": kappa.to_dict(),
        "human_correlation": _spread(scores, gold, method) if any(v is not None for v in gold) else None,
    }


def mean_human_score(label: object, keys: Sequence[str]) -> float | None:
    """The mean of a dict label over `keys` (None when one is missing: a partial mean is another scale);
    a numeric label is returned as it is, anything else is None."""
    if isinstance(label, Mapping):
        return (
            sum(float(label[k]) for k in keys) / len(keys) if keys and all(k in label for k in keys) else None
        )
    return float(label) if isinstance(label, int | float) else None


def _row(row: Any) -> tuple[Hashable | None, dict[str, Any], object]:
    """(item id, result dict, label) from a JudgeResult, its dict, or a runner record."""
    if isinstance(row, JudgeResult):
        return None, row.to_dict(), None
    if isinstance(row, Record):
        return row.id, row.result.to_dict() if row.result is not None else {}, row.item.label
    if not isinstance(row, Mapping):
        raise InputError(
            f"a run row must be a JudgeResult or a dict, got {type(row).__name__}", field="run_results"
        )
    if "result" in row:  # a record: {"id", "item": {..., "label"}, "result": dict, or None after an error}
        result, item = row["result"], row.get("item") or {}
        result = result.to_dict() if isinstance(result, JudgeResult) else dict(result or {})
        return row.get("id"), result, row.get("label", item.get("label"))
    return row.get("id"), dict(row), row.get("label")


def _value(result: dict[str, Any], dimension: str | None) -> float | None:
    if result.get("status") != "ok":
        return None
    return result.get("dimension_scores", {}).get(dimension) if dimension else result.get("score")


def _gold(label: object, key: str | None) -> object:
    if isinstance(label, Mapping):
        if key is None:
            raise InputError(
                "labels hold several human scores: pass human_key (or dimension)", field="human_key"
            )
        return label.get(key)
    return label


def _spread(scores: list[list[float | None]], gold: list[object], method: str) -> dict[str, Any]:
    correlate = _correlation(method)
    per_run = [correlate(run, gold) for run in scores]
    values = [r.value for r in per_run if r.defined]
    mean = sum(values) / len(values) if values else None
    std = (
        math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))  # type: ignore[operator]
        if len(values) >= 2
        else None
    )
    return {
        "method": method,
        "per_run": [r.to_dict() for r in per_run],
        "min": min(values, default=None),
        "max": max(values, default=None),
        "mean": mean,
        "std": std,
    }
