"""A ranking from judged records: strengths or mean scores with intervals, the win-rate matrix, ties,
position bias, per language, and, where the answers carry human scores, how the judge's ranking of the
systems agrees with the humans' (Kendall and Spearman over systems, the item-level figures beside).

Pairwise: each judged comparison's verdict is an outcome (A wins: 1 for the system shown as A, tie: 0.5,
B wins: 0); unparsed and failed comparisons are counted and left out. Position bias is read from the
presentation orders the judge ran (each order's verdict as shown: how often the response shown first
won). Pointwise: each answer's score; a system's mean over the prompts it answered, with a bootstrap
interval over prompts.

The humans' ranking: each system's mean human score over the prompts its judged answers cover.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from cejudge_dspy.rank._bradley_terry import (
    DEFAULT_ALPHA,
    Outcome,
    bootstrap_strengths,
    bradley_terry,
    mean_interval,
)
from cejudge_dspy.rank._schedule import Comparison
from cejudge_dspy.rank._systems import SystemAnswers
from cejudge_dspy.runs import Record

_SCORE = {"A": 1.0, "tie": 0.5, "B": 0.0}


def outcomes(records: Sequence[Record], comparisons: Sequence[Comparison]) -> list[Outcome]:
    """The outcome of each comparison with a verdict, in schedule order."""
    by_id = {r.id: r for r in records}
    out = []
    for c in comparisons:
        r = by_id.get(c.id)
        verdict = r.result.verdict if r is not None and r.result is not None and r.status == "ok" else None
        if verdict in _SCORE:
            out.append(Outcome(c.prompt, c.first, c.second, _SCORE[verdict]))
    return out


def fit_intervals(
    systems: Sequence[str], found: Sequence[Outcome], *, n_resamples: int, seed: int
) -> tuple[dict[str, float], dict[str, tuple[float, float]] | None]:
    return bradley_terry(systems, found, DEFAULT_ALPHA), bootstrap_strengths(
        systems, found, n_resamples=n_resamples, seed=seed
    )


def pairwise_ranking(
    answers: SystemAnswers,
    records: Sequence[Record],
    comparisons: Sequence[Comparison],
    *,
    n_resamples: int,
    seed: int,
) -> dict[str, Any]:
    """The summary of a pairwise ranking run (see the module docstring)."""
    systems = list(answers.systems)
    found = outcomes(records, comparisons)
    strengths, intervals = fit_intervals(systems, found, n_resamples=n_resamples, seed=seed)
    by_id = {r.id: r for r in records}
    statuses: dict[str, int] = defaultdict(int)
    for c in comparisons:
        r = by_id.get(c.id)
        statuses["missing" if r is None else r.status] += 1
    summary: dict[str, Any] = {
        "mode": "pairwise",
        "systems": _table(systems, strengths, intervals, "strength", _wins(found)),
        "comparisons": {"scheduled": len(comparisons), "judged": len(found), **dict(statuses)},
        "win_rate": _win_matrix(systems, found),
        "ties": _ties(systems, found),
        "position_bias": _position_bias([by_id[c.id] for c in comparisons if c.id in by_id]),
        "per_language": _per_language(answers, systems, found, n_resamples, seed),
        "tie_rule": "a tie counts as half a win for each system",
    }
    human = _human_means(answers, {p for o in found for p in [o.prompt]})
    if human:
        summary["human"] = _meta_pairwise(strengths, human, answers, found)
    return summary


def pointwise_ranking(
    answers: SystemAnswers,
    records: Sequence[Record],
    items: dict[str, tuple[str, str]],
    *,
    n_resamples: int,
    seed: int,
) -> dict[str, Any]:
    """The summary of a pointwise ranking run: `items` maps each record id to its (prompt, system)."""
    scores: dict[str, list[tuple[str, float]]] = {s: [] for s in answers.systems}
    statuses: dict[str, int] = defaultdict(int)
    by_id = {r.id: r for r in records}
    for item_id, (prompt, system) in items.items():
        r = by_id.get(item_id)
        statuses["missing" if r is None else r.status] += 1
        if r is not None and r.status == "ok" and r.result is not None and r.result.score is not None:
            scores[system].append((prompt, float(r.result.score)))
    means = {s: statistics.fmean(v for _, v in xs) for s, xs in scores.items() if xs}
    intervals = mean_interval(scores, n_resamples=n_resamples, seed=seed)
    systems = list(answers.systems)
    summary: dict[str, Any] = {
        "mode": "pointwise",
        "systems": _table(systems, means, intervals, "mean_score", {s: len(v) for s, v in scores.items()}),
        "answers": {"scheduled": len(items), **dict(statuses)},
        "per_language": _pointwise_languages(answers, scores),
    }
    human = _human_means(answers, {p for xs in scores.values() for p, _ in xs})
    if human:
        summary["human"] = _meta_pointwise(means, human, answers, scores)
    return summary


def _table(
    systems: Sequence[str],
    values: dict[str, float],
    intervals: dict[str, tuple[float, float]] | None,
    name: str,
    counts: dict[str, Any],
) -> list[dict[str, Any]]:
    """One row per system, best first: its value, 95% interval and count."""
    rows = [
        {
            "system": s,
            name: values.get(s),
            "ci": list(intervals[s]) if intervals and s in intervals else None,
            "n": counts.get(s, 0),
        }
        for s in systems
    ]
    rows.sort(key=lambda r: (-math.inf if r[name] is None else -r[name], r["system"]))
    for i, row in enumerate(rows, 1):
        row["rank"] = i
    return rows


def _wins(found: Sequence[Outcome]) -> dict[str, int]:
    """Comparisons judged per system."""
    n: dict[str, int] = defaultdict(int)
    for o in found:
        n[o.first] += 1
        n[o.second] += 1
    return dict(n)


def _win_matrix(systems: Sequence[str], found: Sequence[Outcome]) -> dict[str, dict[str, Any]]:
    """row system -> column system -> {"rate": its share of points against it (ties half), "n"}."""
    points: dict[tuple[str, str], float] = defaultdict(float)
    n: dict[tuple[str, str], int] = defaultdict(int)
    for o in found:
        points[(o.first, o.second)] += o.score
        points[(o.second, o.first)] += 1 - o.score
        n[(o.first, o.second)] += 1
        n[(o.second, o.first)] += 1
    return {
        a: {
            b: {"rate": points[(a, b)] / n[(a, b)] if n[(a, b)] else None, "n": n[(a, b)]}
            for b in systems
            if b != a
        }
        for a in systems
    }


def _ties(systems: Sequence[str], found: Sequence[Outcome]) -> dict[str, Any]:
    ties = [o for o in found if o.score == 0.5]
    per: dict[str, int] = {s: 0 for s in systems}
    for o in ties:
        per[o.first] += 1
        per[o.second] += 1
    return {"n": len(ties), "share": len(ties) / len(found) if found else None, "per_system": per}


def _position_bias(records: Sequence[Record]) -> dict[str, Any]:
    """How often the response shown first won, over the presentation orders judged with a verdict."""
    shown = [
        o.shown_verdict
        for r in records
        if r.result is not None
        for o in r.result.orders
        if o.shown_verdict in ("A", "B")
    ]
    first = sum(v == "A" for v in shown)
    return {"orders": len(shown), "first_won": first, "first_share": first / len(shown) if shown else None}


def _per_language(
    answers: SystemAnswers, systems: Sequence[str], found: Sequence[Outcome], n_resamples: int, seed: int
) -> dict[str, Any]:
    by_language: dict[str, list[Outcome]] = defaultdict(list)
    for o in found:
        by_language[answers.language(o.prompt)].append(o)
    out = {}
    for language, subset in sorted(by_language.items()):
        if len(by_language) == 1:  # one language: its ranking is the overall one, not fitted twice
            out[language] = {"comparisons": len(subset), "same_as_overall": True}
            continue
        strengths, intervals = fit_intervals(systems, subset, n_resamples=n_resamples, seed=seed)
        out[language] = {
            "comparisons": len(subset),
            "systems": _table(systems, strengths, intervals, "strength", _wins(subset)),
        }
    return out


def _pointwise_languages(
    answers: SystemAnswers, scores: dict[str, list[tuple[str, float]]]
) -> dict[str, Any]:
    by_language: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for system, xs in scores.items():
        for prompt, value in xs:
            by_language[answers.language(prompt)][system].append(value)
    return {
        language: {s: {"mean_score": statistics.fmean(v), "n": len(v)} for s, v in per.items()}
        for language, per in sorted(by_language.items())
    }


def _human_means(answers: SystemAnswers, prompts: set[str]) -> dict[str, float]:
    """Each system's mean human score over `prompts` (the prompts its judged work covers)."""
    values: dict[str, list[float]] = defaultdict(list)
    for (prompt, system), a in answers.answers.items():
        if prompt in prompts and a.human is not None:
            values[system].append(a.human)
    return {s: statistics.fmean(v) for s, v in values.items() if v}


def system_correlation(judge: dict[str, float], human: dict[str, float]) -> dict[str, Any]:
    """Kendall's tau-b and Spearman's rho between the judge's and the humans' system scores (scipy), over
    the systems both score; None below three systems or where a side is constant."""
    from scipy import stats

    shared = sorted(set(judge) & set(human))
    x, y = [judge[s] for s in shared], [human[s] for s in shared]
    result: dict[str, Any] = {"n_systems": len(shared), "kendall": None, "spearman": None}
    if len(shared) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return result
    tau = stats.kendalltau(x, y)
    rho = stats.spearmanr(x, y)
    result |= {
        "kendall": float(tau.statistic),
        "kendall_p": float(tau.pvalue),
        "spearman": float(rho.statistic),
        "spearman_p": float(rho.pvalue),
    }
    return result


def _meta_pairwise(
    strengths: dict[str, float], human: dict[str, float], answers: SystemAnswers, found: Sequence[Outcome]
) -> dict[str, Any]:
    """System level: strengths against human means. Item level: how often a verdict picks the answer the
    humans scored higher (pairs the humans scored equal are counted apart)."""
    agree = judged = human_ties = 0
    for o in found:
        ha, hb = (answers.answers[(o.prompt, s)].human for s in (o.first, o.second))
        if ha is None or hb is None:
            continue
        if ha == hb:
            human_ties += 1
            continue
        judged += 1
        agree += o.score == (1.0 if ha > hb else 0.0)
    return {
        "system_means": human,
        "system_level": system_correlation(strengths, human),
        "item_level": {
            "agreement": agree / judged if judged else None,
            "n": judged,
            "human_ties": human_ties,
            "rule": "a verdict agrees when it picks the answer with the higher human score "
            "(a judge's tie never does)",
        },
    }


def _meta_pointwise(
    means: dict[str, float],
    human: dict[str, float],
    answers: SystemAnswers,
    scores: dict[str, list[tuple[str, float]]],
) -> dict[str, Any]:
    from scipy import stats

    pairs = [
        (value, answers.answers[(prompt, system)].human)
        for system, xs in scores.items()
        for prompt, value in xs
        if answers.answers[(prompt, system)].human is not None
    ]
    item: dict[str, Any] = {"n": len(pairs), "kendall": None, "spearman": None}
    if len(pairs) >= 3 and len({p[0] for p in pairs}) > 1 and len({p[1] for p in pairs}) > 1:
        x, y = zip(*pairs, strict=True)
        item |= {
            "kendall": float(stats.kendalltau(x, y).statistic),
            "spearman": float(stats.spearmanr(x, y).statistic),
        }
    return {"system_means": human, "system_level": system_correlation(means, human), "item_level": item}
