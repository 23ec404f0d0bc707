"""Summaries of a run: the task's meta-metric per language with bootstrap CIs, as the papers report.

Input: the records of results.jsonl and the task declaration. Unparsed and errored items enter the
metrics as missing values, so they are excluded and counted, never graded. Pairwise summaries add
position consistency (verdicts that survive the order swap) and the share of A verdicts, the two
numbers that expose position preference. Every per-language row (and the overall one) carries `counts`:
`items` judged = `scored` (the metric's n) + `unparsed` + `gold_ties` (pairwise gold ties, which a
judge that must pick a side cannot get right) + `errors` + `no_label`. Below `MIN_CI_ITEMS` scored items
no bootstrap CI is computed: a percentile interval over 1-4 items says nothing. CheckEval tasks add one
row per dimension, at sample level and per document (group), and an `overall` row (item score against
the mean human score over the declared dimensions, sample level only).

Items without a gold label get no metric: `label_free` (_label_free.py, present only when such items
exist) gives their verdict shares (pairwise) or score distribution (pointwise) per language and overall,
with intervals; in a partly labelled run the rows' `counts` say how many items were scored.

Pairwise rows also carry `strict`: strict accuracy (an unparsed verdict counted as wrong, the CE-Judge
paper's definition), with its own CI; errored items stay excluded from it. The summary's
`strict_average` is its macro average over languages.

How one record is scored (its language, prediction and counts) lives in _scoring.py and the per-dimension
table in _dimensions.py; `cejudge_dspy.metrics` exports their public names with `summarize`.
"""

from __future__ import annotations

import copy
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from cejudge_dspy.judges.verdicts import CHECK_NAMES, DECISIONS, Decision, JudgeResult
from cejudge_dspy.metrics._correlations import CORRELATIONS
from cejudge_dspy.metrics._dimensions import dimension_table
from cejudge_dspy.metrics._label_free import label_free_summary
from cejudge_dspy.metrics._measures import accuracy, position_consistency, share, strict_accuracy
from cejudge_dspy.metrics._result import MetricResult
from cejudge_dspy.metrics._scoring import item_counts, language_key, prediction, strict_golds
from cejudge_dspy.metrics._selective import has_confidence, selective_summary
from cejudge_dspy.metrics._significance import check_bootstrap_args, with_bootstrap_ci
from cejudge_dspy.runs import Record
from cejudge_dspy.tasks import TaskSpec


def _metric_fn(spec: TaskSpec) -> Callable[..., MetricResult]:
    return accuracy if spec.metric == "accuracy" else CORRELATIONS[spec.metric]


MIN_CI_ITEMS = 5


# A summary's metric rows by (metric, predictions, golds): one summary computes the same row several
# times (each decision rule that leaves a language's predictions as they were, strict accuracy without
# unparsed items), and each bootstrap costs milliseconds; a memo lives for one `summarize` call.
Memo = dict[tuple[Any, ...], dict[str, Any]]


def _with_ci(
    fn: Callable[..., MetricResult],
    preds: list[Any],
    golds: list[Any],
    n_resamples: int,
    seed: int,
    memo: Memo | None = None,
) -> dict[str, Any]:
    try:
        key: tuple[Any, ...] | None = (fn, tuple(preds), tuple(golds), n_resamples, seed)
        hash(key)
    except TypeError:  # an unhashable label (a dict): computed every time
        key = None
    if memo is not None and key is not None and key in memo:
        return copy.deepcopy(memo[key])
    result = fn(preds, golds)
    if n_resamples and result.n >= MIN_CI_ITEMS:  # bootstrap_ci's interval, from the point just computed
        check_bootstrap_args(n_resamples, 0.95)
        result = with_bootstrap_ci(result, fn, [list(preds), list(golds)], n_resamples, 0.95, seed)
    row = result.to_dict()
    if memo is not None and key is not None:
        memo[key] = copy.deepcopy(row)
    return row


def summarize(
    records: Sequence[Record],
    spec: TaskSpec,
    *,
    n_resamples: int = 1000,
    seed: int = 42,
    missing: int | None = None,
    abstain_below: float | None = None,
    confidence: str = "auto",
) -> dict[str, Any]:
    """Summary dict (JSON-ready) for a run's records; see the module docstring. `missing`, when a reader
    knows it (`runs.RunRecords.n_missing`: run.json's items without a record, a torn last line), is
    reported as `n_missing`: a damaged run is never summarized as a smaller complete one.

    Records judged with token probabilities add `decision_rules`: the same metrics under the argmax
    and the probability rule from this one run (see `JudgeResult.under`), how many records had usable
    probabilities, and for pairwise tasks the calibration of the probability verdict's confidence.

    Records with a confidence (`_selective.py`: token probabilities, panel agreement; source chosen by
    `confidence`) add `selective`: the risk-coverage table. `abstain_below` leaves the records with a
    prediction and a confidence below it (or none) `abstained`: out of every metric, counted in
    `n_abstained` and each row's `counts`, their ids in `selective.abstained`."""
    latest = {r.id: r for r in records}  # a retried item's last record wins
    # Sorted by id: the bootstrap resamples by position, and file order depends on completion order
    # (concurrency) or shard order (merge); the same predictions must give the same CIs.
    rows = sorted(latest.values(), key=lambda r: r.id)
    counts = {s: sum(r.status == s for r in rows) for s in ("ok", "unparsed", "error")}
    out: dict[str, Any] = {
        "task": spec.name,
        "metric": spec.metric,
        "n_items": len(rows),
        **{f"n_{k}": v for k, v in counts.items()},
        **({"n_missing": missing} if missing is not None else {}),
        "methods": sorted({r.method for r in rows}),
    }
    selective = None
    if abstain_below is not None or has_confidence(rows, confidence):
        selective = selective_summary(rows, spec.mode, confidence=confidence, abstain_below=abstain_below)
    abstained = frozenset(selective["abstained"]) if selective and abstain_below is not None else None
    if abstained is not None:
        out["n_abstained"] = len(abstained)
    memo: Memo = {}
    headline = _metrics(rows, spec, n_resamples, seed, abstained, memo)
    out.update(headline)
    out["usage"] = _usage(rows)
    if any(r.result is not None and r.result.probabilities is not None for r in rows):
        out["decision_rules"] = decision_rules(
            rows, spec, n_resamples=n_resamples, seed=seed, headline=headline, abstained=abstained, memo=memo
        )
    if selective is not None:
        out["selective"] = selective
    return out


def under_rule(record: Record, rule: Decision) -> Record:
    """The record with its result's headline decided by `rule` (the record itself if that changes nothing)."""
    ruled = record.result.under(rule) if record.result is not None else None
    return record if ruled is record.result else replace(record, result=ruled)


def _decider(result: JudgeResult) -> str:
    """What decided a record: the check that gave its score (neither rule's), else the rule applied."""
    by = result.decided_by.get("probability")
    return by if by in CHECK_NAMES else result.decision


def decision_rules(
    rows: Sequence[Record],
    spec: TaskSpec,
    *,
    n_resamples: int = 1000,
    seed: int = 42,
    headline: dict[str, Any] | None = None,
    abstained: frozenset[str] | None = None,
    memo: Memo | None = None,
) -> dict[str, Any]:
    """Both decision rules from one run, what the probabilities were (`ok`, `unavailable`,
    `not_located` per record) and, pairwise, the calibration of the probability verdict's confidence.
    `headline`: `_metrics` of `rows` as they are, already computed; a rule that leaves every record as it
    is (the run's own rule, or one that finds no probabilities to decide by) reuses it instead of
    computing the same numbers again."""
    status: dict[str, int] = defaultdict(int)
    decided: dict[str, int] = dict.fromkeys(DECISIONS, 0)
    for r in rows:
        if r.result is not None and r.status == "ok":
            status[r.result.probabilities.status if r.result.probabilities else "none"] += 1
            key = _decider(r.result)
            decided[key] = decided.get(key, 0) + 1
    out: dict[str, Any] = {
        "decided_by": dict(sorted(decided.items())),
        "probabilities": dict(sorted(status.items())),
    }
    for rule in DECISIONS:
        ruled = [under_rule(r, rule) for r in rows]
        # Records equal field for field measure the same (the probability rule keeps the argmax where a
        # record has no probabilities: its results are rebuilt, equal to the run's own).
        if headline is not None and all(a is b or a == b for a, b in zip(ruled, rows, strict=True)):
            out[rule] = copy.deepcopy(headline)
        else:
            out[rule] = _metrics(ruled, spec, n_resamples, seed, abstained, memo)
    if spec.mode == "pairwise":
        from cejudge_dspy.metrics._calibration import calibration_summary, preferences, recorded_tie_band

        out["calibration"] = calibration_summary(*preferences(rows), against=recorded_tie_band(rows))
    return out


def _metrics(
    all_rows: Sequence[Record],
    spec: TaskSpec,
    n_resamples: int,
    seed: int,
    abstained: frozenset[str] | None = None,
    memo: Memo | None = None,
) -> dict[str, Any]:
    """The task's metric per language and overall, pairwise extras, dimensions, and distinct scores;
    `abstained` records are left out of the metrics (per language, overall, dimensions) and counted in
    `counts`; the position figures and distinct scores describe what the judge did, so they keep them."""
    out: dict[str, Any] = {}
    fn = _metric_fn(spec)
    skip = abstained or frozenset()
    rows = [r for r in all_rows if r.id not in skip]
    scalar = [r for r in all_rows if not isinstance(r.item.label, dict)]
    labelled = [r for r in scalar if r.item.label is not None and r.id not in skip]
    by_lang: dict[str, list[Record]] = defaultdict(list)
    for r in scalar:
        by_lang[language_key(r.item)].append(r)
    per_language = {}
    for lang in sorted(by_lang):
        if all(r.item.label is None for r in by_lang[lang]):
            continue  # nothing to measure against; the items still count in n_items
        rs = [r for r in by_lang[lang] if r.item.label is not None and r.id not in skip]
        per_language[lang] = _with_ci(
            fn, [prediction(r) for r in rs], [r.item.label for r in rs], n_resamples, seed, memo
        )
        per_language[lang]["counts"] = item_counts(by_lang[lang], abstained)
        if spec.mode == "pairwise":
            per_language[lang]["strict"] = _strict(rs, n_resamples, seed, memo)
    out["per_language"] = per_language
    out["average"] = _macro(v["value"] for v in per_language.values())  # as the paper reports
    if any(r.item.label is not None for r in scalar):
        out["overall"] = _with_ci(
            fn, [prediction(r) for r in labelled], [r.item.label for r in labelled], n_resamples, seed, memo
        )
        out["overall"]["counts"] = item_counts(scalar, abstained)
        if spec.mode == "pairwise":
            out["overall"]["strict"] = _strict(labelled, n_resamples, seed, memo)
    if spec.mode == "pairwise":
        out["strict_average"] = _macro(v["strict"]["value"] for v in per_language.values())
    if spec.mode == "pairwise":
        out.update(_pairwise_extras(all_rows))  # what the judge did: abstained items too
    else:
        # Few distinct scores make rank correlations mostly ties (the reason for expected scores).
        scores = {round(float(p), 6) for r in all_rows if (p := prediction(r)) is not None}
        out["distinct_scores"] = len(scores)
        # Scores a check gave without an LLM judgment (judges/cejudge/_checks.py), so a reader knows how
        # much of the ranking is the judge's.
        checks = [_decider(r.result) for r in all_rows if r.result and r.status == "ok"]
        if by_check := {c: checks.count(c) for c in CHECK_NAMES if c in checks}:
            out["decided_by_checks"] = by_check
    # Items without a gold label: what the judge said, with intervals, instead of a metric (absent when
    # every item has a label, so a labelled run's summary is what it was).
    if label_free := label_free_summary(
        all_rows, spec.mode, n_resamples=n_resamples, seed=seed, abstained=abstained
    ):
        out["label_free"] = label_free
    if spec.dimensions:
        out["dimensions"] = dimension_table(rows, spec)
        out["constant_dimensions"] = sorted(
            name
            for name, row in out["dimensions"].items()
            if name != "overall" and "constant" in str((row.get("spearman") or {}).get("reason") or "")
        )
    return out


def _strict(rows: Sequence[Record], n_resamples: int, seed: int, memo: Memo | None = None) -> dict[str, Any]:
    golds = strict_golds(rows)
    return _with_ci(strict_accuracy, [prediction(r) for r in rows], golds, n_resamples, seed, memo)


def _macro(values: Any) -> float | None:
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


def _pairwise_extras(rows: Sequence[Record]) -> dict[str, Any]:
    ab, ba, shown, final = [], [], [], []
    for r in rows:
        orders = r.result.orders if r.result is not None and r.status != "error" else []
        ab.append(orders[0].verdict if orders else None)
        ba.append(orders[1].verdict if len(orders) > 1 else None)
        shown.extend(o.shown_verdict for o in orders)
        final.append(prediction(r))
    extras = {
        # Share of "A" among what the model said in each shown order: 0.5 means no position preference.
        "share_shown_A": share(shown, "A").to_dict(),
        "share_final_A": share(final, "A").to_dict(),
        "share_tie": share(final, "tie").to_dict(),
    }
    if any(v is not None for v in ba):
        extras["position_consistency"] = position_consistency(ab, ba).to_dict()
    # Graded judgment: items the two responses' own grades decided never showed a pair, so they are in
    # neither position figure above; count them, so the reader knows what those figures cover.
    graded = [r for r in rows if r.result is not None and r.status == "ok" and r.result.grades]
    if graded:
        unshown = [r.result for r in graded if r.result is not None and not r.result.orders]
        # Of those, the ones whose grades were too close and that the likelihood tie-breaker decided.
        liked = sum(res.decided_by.get(res.decision) == "likelihood" for res in unshown)
        extras["decided_by_grades"] = len(unshown) - liked
        if liked:
            extras["decided_by_likelihood"] = liked
        extras["n_graded"] = len(graded)
    return extras


def _usage(rows: Sequence[Record]) -> dict[str, Any]:
    usages = [r.result.usage for r in rows if r.result is not None]
    total: dict[str, Any] = {
        k: sum(getattr(u, k) for u in usages)
        for k in ("calls", "cached", "reused", "prompt_tokens", "completion_tokens")
    }
    n = len(usages)
    total["calls_per_item"] = total["calls"] / n if n else math.nan
    seconds = [r.seconds for r in rows]
    total["seconds_per_item"] = sum(seconds) / len(seconds) if seconds else math.nan
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in total.items()}
