"""Selective judging: how good a judge is on the items it is most confident about, and abstaining on the rest.

**Confidence** of one record (`item_confidence`), from what the record holds (`CONFIDENCES`):

* `margin`: pairwise |p(A) - 0.5| in [0, 0.5] (the token probabilities, `probabilities.p_a`; a panel's
  record, which has none of its own, its members' mean p(A), `details["panel"]["mean_p_a"]`); pointwise
  the probability of the most probable scale level, in [1/levels, 1] (`probabilities.distribution`).
* `agreement`: a per-item agreement in [0, 1] that a record carries: a panel's in
  `result.details["panel"]["agreement"]` (the share of its judges that gave the most common answer),
  else `result.details["agreement"]`.
* `both`: agreement x margin, on the margin's scale: a confident verdict that the panel splits on is
  worth less than one it agrees on.

`choose_confidence` picks the source for a run (`auto`: both when records carry agreement and a margin,
agreement when they carry only that, else margin). A record without the chosen value has no confidence
(`None`): a backbone without token probabilities, a probability token not located, CheckEval (whose
probabilities are per question, not per scale level).

**Risk-coverage** (`risk_coverage`): the scored items (a prediction and a gold label; pairwise gold ties
left out, as accuracy leaves them out) ordered by confidence, highest first, items without a confidence
last. Pairwise, risk at coverage k/n is the share wrong among the first k; AURC is the mean risk over
k = 1..n (Geifman et al., 2018), `optimal_aurc` the AURC of the oracle order (every right item first):
the mean over k of max(0, k - right)/k, and `excess_aurc` the difference, 0 for a perfect ordering.
Pointwise, the value at each coverage is Kendall's tau over the kept items; `area` is its mean over the
coverages 1%, 2%, ..., 100% where it is defined (no oracle: the best subset for a correlation is not a
simple order).

**Ties in confidence** are never broken by an arbitrary key: items of equal confidence (equal to 9
decimals; all items without one form one group) are kept or dropped together. Inside a group the AURC
takes the expected risk over every order of the group (the group's share wrong times the items taken
from it), which is what averaging over random tie-breaks gives; the table's rows (`curve`) sit on group
boundaries, so each row is what `abstain_below=<its threshold>` keeps.

**Abstaining** (`abstained_ids`): with a threshold X, every record that has a prediction (status ok)
and a confidence below X, or none, is `abstained`: left out of the metrics and counted as such
(`metrics.summarize`), its id listed so a person can judge it. It is applied when a run is summarised,
never written into a record: the judge asked the LM the same questions whatever X is, so a run can be
re-thresholded without judging again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from cejudge_dspy.metrics._correlations import kendall_tau
from cejudge_dspy.metrics._scoring import prediction
from cejudge_dspy.runs import Record

Confidence = Literal["margin", "agreement", "both"]
CONFIDENCES: tuple[str, ...] = ("auto", "margin", "agreement", "both")
# Confidences equal to this many decimals are one group (float noise never splits a tie).
TIE_DECIMALS = 9
# The summary's curve: a row per 5% of coverage (rows that keep the same items merged).
CURVE_STEPS = 20
AREA_STEPS = 100


def _share(value: Any) -> float | None:
    """A number in [0, 1], else None (a hand-edited or foreign value is no confidence)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        return None
    return float(value)


def _panel(record: Record) -> dict[str, Any]:
    panel = record.result.details.get("panel") if record.result is not None else None
    return panel if isinstance(panel, dict) else {}


def _agreement(record: Record) -> float | None:
    if record.result is None:
        return None
    panel = _panel(record)
    return _share(panel["agreement"] if "agreement" in panel else record.result.details.get("agreement"))


def _margin(record: Record) -> float | None:
    result = record.result
    if result is None:
        return None
    probs = result.probabilities
    if probs is None or not probs.ok:
        p_a = _share(_panel(record).get("mean_p_a")) if result.mode == "pairwise" else None
        return abs(p_a - 0.5) if p_a is not None else None
    # A NaN p(A) (a run from before log probabilities were checked, or a hand-edited one) is no confidence.
    if result.mode == "pairwise":
        p_a = _share(probs.p_a)
        return abs(p_a - 0.5) if p_a is not None else None
    top = [_share(v) for v in (probs.distribution or {}).values()]
    return max(top) if top and None not in top else None


def item_confidence(record: Record, source: Confidence) -> float | None:
    """The record's confidence from `source` (see the module docstring); None when it has none."""
    if record.status != "ok" or record.result is None:
        return None
    if source == "margin":
        return _margin(record)
    if source == "agreement":
        return _agreement(record)
    margin, agreement = _margin(record), _agreement(record)
    return margin * agreement if margin is not None and agreement is not None else None


def choose_confidence(records: Sequence[Record], wanted: str = "auto") -> Confidence:
    """The confidence source for these records: `wanted`, or under `auto` what they carry."""
    if wanted != "auto":
        if wanted not in CONFIDENCES:
            raise ValueError(f"confidence must be one of {', '.join(CONFIDENCES)}, got {wanted!r}")
        return wanted  # type: ignore[return-value]
    agreement = any(_agreement(r) is not None for r in records)
    margin = any(_margin(r) is not None for r in records)
    return "both" if agreement and margin else "agreement" if agreement else "margin"


def abstained_ids(records: Sequence[Record], threshold: float, source: Confidence) -> list[str]:
    """Ids of the records left to a person under `threshold`: a prediction, and a confidence below it
    or none (unparsed and errored records keep their own outcome). Sorted."""
    out = []
    for r in records:
        if prediction(r) is None:
            continue
        c = item_confidence(r, source)
        if c is None or round(c, TIE_DECIMALS) < round(threshold, TIE_DECIMALS):
            out.append(r.id)
    return sorted(out)


def _ordered(confidences: Sequence[float | None]) -> list[list[int]]:
    """Item indices grouped by equal confidence, highest group first, the group without one last."""
    groups: dict[float | None, list[int]] = {}
    for i, c in enumerate(confidences):
        groups.setdefault(None if c is None else round(c, TIE_DECIMALS), []).append(i)
    keys = sorted((k for k in groups if k is not None), reverse=True)
    return [groups[k] for k in keys] + ([groups[None]] if None in groups else [])


def aurc(correct: Sequence[bool], confidences: Sequence[float | None]) -> dict[str, float | None]:
    """AURC, the oracle's AURC and their difference for items right or wrong (see the module
    docstring: ties take the expected risk over their orders). None without items."""
    n = len(correct)
    if n == 0:
        return {"aurc": None, "optimal_aurc": None, "excess_aurc": None}
    total, before, wrong_before = 0.0, 0, 0
    for group in _ordered(confidences):
        wrong = sum(not correct[i] for i in group)
        for j in range(1, len(group) + 1):
            total += (wrong_before + j * wrong / len(group)) / (before + j)
        before, wrong_before = before + len(group), wrong_before + wrong
    right = sum(bool(c) for c in correct)
    optimal = sum(max(0, k - right) / k for k in range(1, n + 1)) / n
    return {"aurc": total / n, "optimal_aurc": optimal, "excess_aurc": total / n - optimal}


def _scored(records: Sequence[Record], mode: str) -> list[tuple[Record, Any, Any]]:
    """(record, prediction, gold) for the items a curve scores (a prediction and a gold label;
    pairwise gold ties left out, as accuracy leaves them out)."""
    out = []
    for r in records:
        pred, gold = prediction(r), r.item.label
        if pred is None or gold is None or isinstance(gold, dict):
            continue
        if mode == "pairwise":
            gold = str(gold).strip().upper()
            if gold not in ("A", "B"):
                continue  # a gold tie (or no pairwise label): accuracy leaves it out
        out.append((r, pred, gold))
    return out


def _cuts(groups: list[list[int]], n: int, steps: int) -> list[int]:
    """How many items each of `steps` coverages keeps, moved up to the end of the group it falls in."""
    ends, at = [], 0
    for g in groups:
        at += len(g)
        ends.append(at)
    return sorted({next(e for e in ends if e >= math.ceil(n * s / steps)) for s in range(1, steps + 1)})


def risk_coverage(
    records: Sequence[Record], mode: str, source: Confidence, *, steps: int = CURVE_STEPS
) -> dict[str, Any]:
    """The selective-judging table of a run's records (see the module docstring): `n` items scored,
    `n_without_confidence`, `metric`, the `curve` (a row per coverage step: `coverage`, `n`, `threshold`
    = the lowest confidence kept, `value`, pairwise `risk` and the oracle's `optimal` value), `area`
    and, pairwise, `aurc`, `optimal_aurc` and `excess_aurc`."""
    scored = _scored(records, mode)
    conf = [item_confidence(r, source) for r, _, _ in scored]
    n = len(scored)
    out: dict[str, Any] = {
        "metric": "accuracy" if mode == "pairwise" else "kendall",
        "n": n,
        "n_without_confidence": sum(c is None for c in conf),
    }
    if not n:
        return {**out, "curve": [], "area": None} | ({"aurc": None} if mode == "pairwise" else {})
    groups = _ordered(conf)
    order = [i for g in groups for i in g]
    correct = [str(pred).upper() == gold if mode == "pairwise" else False for _, pred, gold in scored]

    def value(k: int) -> float | None:
        kept = order[:k]
        if mode == "pairwise":
            return sum(correct[i] for i in kept) / k
        result = kendall_tau([scored[i][1] for i in kept], [scored[i][2] for i in kept])
        return None if math.isnan(result.value) else result.value

    rows = []
    for k in _cuts(groups, n, steps):
        v = value(k)
        row = {"coverage": k / n, "n": k, "threshold": conf[order[k - 1]], "value": v}
        if mode == "pairwise":
            row |= {"risk": 1 - v, "optimal": min(1.0, sum(correct) / k)}  # type: ignore[operator]
        rows.append(row)
    out["curve"] = rows
    if mode == "pairwise":
        out |= aurc(correct, conf)
        out["area"] = 1 - out["aurc"]
    else:
        values = [v for k in _cuts(groups, n, AREA_STEPS) if (v := value(k)) is not None]
        out["area"] = sum(values) / len(values) if values else None
    return out


def selective_summary(
    records: Sequence[Record],
    mode: str,
    *,
    confidence: str = "auto",
    abstain_below: float | None = None,
) -> dict[str, Any]:
    """The summary's `selective` section: the confidence source, the risk-coverage table and, with a
    threshold, `abstain_below`, `n_abstained`, the `abstained` ids (sorted) and `coverage`: the share
    of the scored items (the curve's `n`) kept."""
    source = choose_confidence(records, confidence)
    out: dict[str, Any] = {"confidence": source, **risk_coverage(records, mode, source)}
    if abstain_below is not None:
        ids = abstained_ids(records, abstain_below, source)
        gone = set(ids)
        kept = sum(r.id not in gone for r, _, _ in _scored(records, mode))
        out |= {
            "abstain_below": abstain_below,
            "n_abstained": len(ids),
            "abstained": ids,
            "coverage": kept / out["n"] if out["n"] else None,
        }
    return out


def has_confidence(records: Sequence[Record], confidence: str = "auto") -> bool:
    """Whether any record has a confidence from `confidence` (a run worth a selective table)."""
    source = choose_confidence(records, confidence)
    return any(item_confidence(r, source) is not None for r in records)
