"""What a judge said about items without a gold label: verdict shares (pairwise) or the score
distribution (pointwise), per language and overall, with intervals. No accuracy and no correlation:
there is nothing to measure them against.

Shares carry Wilson score intervals (`scipy.stats.binomtest(...).proportion_ci(method="wilson")`), which
stay inside [0, 1] and keep their coverage at the small counts a label-free sample often has; the mean
score carries the percentile bootstrap every other summary figure uses (`bootstrap_ci`), from
`MIN_CI_ITEMS` judged items. Unparsed and errored items have no verdict or score: they are counted, never
shared out. Items a selective run left to a person (`abstained`) are counted and left out, as the
labelled metrics leave them out.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from cejudge_dspy.metrics._result import PAIRWISE_LABELS, MetricResult, undefined_result
from cejudge_dspy.metrics._scoring import errored, language_key, prediction
from cejudge_dspy.metrics._significance import bootstrap_ci
from cejudge_dspy.runs import Record

MIN_CI_ITEMS = 5  # as _summary.py: a percentile interval over 1-4 items says nothing
CONFIDENCE = 0.95


def label_free_summary(
    rows: Sequence[Record],
    mode: str,
    *,
    n_resamples: int = 1000,
    seed: int = 42,
    abstained: frozenset[str] | None = None,
) -> dict[str, Any] | None:
    """The `label_free` part of a summary for the records whose item has no gold label; None when every
    item has one (a labelled run's summary is then unchanged)."""
    unlabelled = [r for r in rows if r.item.label is None]
    if not unlabelled:
        return None
    by_lang: dict[str, list[Record]] = defaultdict(list)
    for r in unlabelled:
        by_lang[language_key(r.item)].append(r)
    describe = _shares if mode == "pairwise" else _scores

    def part(rs: Sequence[Record]) -> dict[str, Any]:
        judged = [r for r in rs if prediction(r) is not None and not (abstained and r.id in abstained)]
        return {
            "counts": _counts(rs, abstained),
            **describe([prediction(r) for r in judged], n_resamples, seed),
        }

    return {
        "n_items": len(unlabelled),
        "per_language": {lang: part(by_lang[lang]) for lang in sorted(by_lang)},
        "overall": part(unlabelled),
    }


def _counts(rows: Sequence[Record], abstained: frozenset[str] | None) -> dict[str, int]:
    """`items` = `judged` + `unparsed` + `errors` (+ `abstained` in a selective run)."""
    out = {"items": len(rows), "judged": 0, "unparsed": 0, "errors": 0}
    if abstained is not None:
        out["abstained"] = 0
    for r in rows:
        if errored(r):
            out["errors"] += 1
        elif prediction(r) is None:
            out["unparsed"] += 1
        elif abstained is not None and r.id in abstained:
            out["abstained"] += 1
        else:
            out["judged"] += 1
    return out


def wilson_share(hits: int, n: int, name: str, confidence: float = CONFIDENCE) -> MetricResult:
    """`hits / n` with its Wilson score interval; undefined when nothing was judged."""
    if n == 0:
        return undefined_result(name, 0, 0, "no judged items", n_target=0)
    from scipy import stats  # here: scipy.stats takes a second to import, and only a label-free run uses it

    ci = stats.binomtest(hits, n).proportion_ci(confidence_level=confidence, method="wilson")
    return MetricResult(
        name, hits / n, n, ci_low=float(ci.low), ci_high=float(ci.high), extra={"n_target": hits}
    )


def _shares(verdicts: list[Any], n_resamples: int, seed: int) -> dict[str, Any]:
    """The share of each verdict among the judged items (A, B, tie), each with its Wilson interval."""
    del n_resamples, seed  # Wilson intervals are exact to compute; no resampling
    n = len(verdicts)
    return {
        label: wilson_share(sum(v == label for v in verdicts), n, f"share_{label}").to_dict()
        for label in PAIRWISE_LABELS
    }


def _mean(scores: Sequence[Any]) -> MetricResult:
    values = [float(s) for s in scores]
    if not values:
        return undefined_result("mean_score", 0, 0, "no judged items")
    return MetricResult("mean_score", float(np.mean(values)), len(values))


def _scores(scores: list[Any], n_resamples: int, seed: int) -> dict[str, Any]:
    """The mean score with its bootstrap interval, the spread, quartiles and (for the few distinct values
    a scale gives) how many items got each score."""
    mean = _mean(scores)
    if n_resamples and mean.n >= MIN_CI_ITEMS:
        mean = bootstrap_ci(_mean, scores, n_resamples=n_resamples, seed=seed)
    out: dict[str, Any] = {"mean": mean.to_dict()}
    values = np.array([float(s) for s in scores], dtype=float)
    if values.size:
        q = np.quantile(values, [0.0, 0.25, 0.5, 0.75, 1.0])
        out["sd"] = float(values.std(ddof=1)) if values.size > 1 else None
        out["quartiles"] = dict(zip(("min", "q1", "median", "q3", "max"), map(float, q), strict=True))
        distinct = sorted({round(float(v), 6) for v in values})
        if len(distinct) <= 20:  # a scale's levels; expected scores are continuous and get no histogram
            out["histogram"] = {_key(v): int(np.sum(np.isclose(values, v))) for v in distinct}
    return out


def _key(value: float) -> str:
    """A score as a JSON key: 4 for 4.0, 3.5 as it is."""
    return str(int(value)) if math.isclose(value, round(value)) else f"{value:g}"
