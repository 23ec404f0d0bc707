"""Tables of the decision rules: both rules from one run, the calibration of pairwise confidence, the
tie band chosen on a run's items (`cejudge calibrate`), and the risk-coverage table of selective judging."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from cejudge_dspy.cli.display._text import _fmt

# Bands shown in the tie-band table besides the chosen one and the run's own (the full curve is in --json).
SHOWN_BANDS = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)


def _ci(m: dict[str, Any] | None) -> str:
    if not m or m.get("ci_low") is None:
        return ""
    return f" [{_fmt(m['ci_low'])}, {_fmt(m['ci_high'])}]"


def _value(m: dict[str, Any] | None) -> str:
    return _fmt((m or {}).get("value")) + _ci(m)


def decision_rules_table(summary: dict[str, Any]) -> Table | None:
    """The run's metrics under the argmax and the probability rule, from the same records (None for
    a run recorded without probabilities)."""
    rules = summary.get("decision_rules")
    if not rules:
        return None
    metric, pairwise = summary["metric"], "share_final_A" in summary
    # A CheckEval-style task's labels are per dimension: its rows are the per-dimension Spearman values.
    dims = list(summary.get("dimensions") or {})
    title = "Both decision rules on this run's records"
    table = Table(title=title + (" (Spearman with humans per dimension)" if dims else ""))
    if dims:
        columns = ["rule", *dims, "constant dimensions"]
    else:
        columns = ["rule", f"{metric} (all items)", "macro average"]
        columns += ["final A", "ties", "strict accuracy"] if pairwise else ["distinct scores"]
    for col in columns:
        table.add_column(col, justify="left" if col == "rule" else "right")
    for rule in ("argmax", "probability"):
        m = rules.get(rule) or {}
        if dims:
            cells = [_value((m.get("dimensions") or {}).get(d, {}).get("spearman")) for d in dims]
            cells.append(", ".join(m.get("constant_dimensions") or []) or "none")
        else:
            cells = [_value(m.get("overall")), _fmt(m.get("average"))]
            if pairwise:
                cells += [_fmt((m.get(k) or {}).get("value")) for k in ("share_final_A", "share_tie")]
                cells.append(_value((m.get("overall") or {}).get("strict")))
            else:
                cells.append(_fmt(m.get("distinct_scores")))
        table.add_row(rule, *cells)
    decided = ", ".join(f"{k} {v}" for k, v in rules.get("decided_by", {}).items())
    probs = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in rules.get("probabilities", {}).items())
    table.caption = (
        f"records decided by: {decided} · probabilities: {probs} · the probability rule keeps the argmax "
        "where a record has no probabilities"
    )
    return table


def reliability_table(calibration: dict[str, Any]) -> Table:
    """Pairwise confidence per bin against accuracy, with the expected calibration error."""
    table = Table(title="Calibration of pairwise confidence max(p(A), 1 - p(A))")
    for col in ("confidence bin", "items", "mean confidence", "accuracy", "gap"):
        table.add_column(col, justify="left" if col == "confidence bin" else "right")
    for row in calibration["reliability"]:
        gap = abs(row["accuracy"] - row["confidence"]) if row["n"] else None
        bin_ = f"{row['low']:.2f}-{row['high']:.2f}"
        table.add_row(bin_, str(row["n"]), _fmt(row["confidence"]), _fmt(row["accuracy"]), _fmt(gap))
    table.caption = (
        f"ECE {_fmt(calibration['ece'])} over {calibration['n']} items (gold ties and p(A) = 0.5 left out; "
        "0 = confidence matches accuracy)"
    )
    return table


def tie_band_table(choice: dict[str, Any]) -> Table:
    """The accuracy with ties per candidate band (a selection; every candidate is in --json)."""
    chosen, against = choice.get("tie_band"), (choice.get("against") or {}).get("tie_band")
    table = Table(title=f"Tie band on these {choice['n']} items, {choice['n_gold_ties']} of them gold ties")
    for col in ("tie band", "accuracy with ties", "accuracy (gold A/B)", "tie verdicts", ""):
        table.add_column(col, justify="right")
    for row in choice["candidates"]:
        band = row["tie_band"]
        if band not in SHOWN_BANDS and band not in (chosen, against):
            continue
        mark = " · ".join(
            w for w, on in (("chosen", band == chosen), ("the run's band", band == against)) if on
        )
        table.add_row(
            f"{band:g}", _fmt(row["accuracy_with_ties"]), _fmt(row["accuracy"]), str(row["ties"]), mark
        )
    vs = choice.get("against")
    if chosen is not None and vs:
        table.caption = (
            f"chosen: {chosen:g}, the narrowest band with the best accuracy with ties "
            f"({_fmt(choice['accuracy_with_ties'])}, vs {_fmt(vs['accuracy_with_ties'])} at "
            f"{vs['tie_band']:g}; "
            f"McNemar p {_fmt(vs['p_value'])}). Chosen on these items, so the gain is optimistic: "
            "choose on a dev split, confirm on held-out items"
        )
    return table


# How each confidence source is measured (metrics/_selective.py), for the table's title.
_CONFIDENCE_WORDS = {
    "margin": {"pairwise": "|p(A) - 0.5|", "pointwise": "the probability of the most likely level"},
    "agreement": {"pairwise": "panel agreement", "pointwise": "panel agreement"},
    "both": {"pairwise": "agreement x |p(A) - 0.5|", "pointwise": "agreement x p(most likely level)"},
}


def selective_table(selective: dict[str, Any], mode: str, every: int = 2) -> Table:
    """The risk-coverage table (every `every`-th row of the summary's curve, and the last), AURC in the
    caption, and what `abstain_below` left to a person."""
    metric = selective["metric"]
    words = _CONFIDENCE_WORDS[selective["confidence"]][mode]
    table = Table(title=f"Selective judging: {metric} on the most confident items (confidence: {words})")
    cols = ["coverage", "items", "abstain below", metric]
    if mode == "pairwise":
        cols.append("oracle")
    for col in cols:
        table.add_column(col, justify="right")
    curve = selective["curve"]
    for n, row in enumerate(curve):
        if n % every != every - 1 and n != len(curve) - 1:
            continue
        cells = [f"{row['coverage']:.0%}", str(row["n"]), _fmt(row["threshold"]), _fmt(row["value"])]
        table.add_row(*cells, *([_fmt(row["optimal"])] if mode == "pairwise" else []))
    table.caption = " · ".join(_selective_caption(selective, mode))
    return table


def _selective_caption(selective: dict[str, Any], mode: str) -> list[str]:
    parts = [f"{selective['n']} scored items"]
    if selective["n_without_confidence"]:
        parts.append(f"{selective['n_without_confidence']} without a confidence (last; n/a threshold)")
    if mode == "pairwise":
        parts.append(
            f"AURC {_fmt(selective.get('aurc'))} (oracle {_fmt(selective.get('optimal_aurc'))}, "
            f"excess {_fmt(selective.get('excess_aurc'))}; lower is better)"
        )
    else:
        parts.append(f"mean Kendall over coverage {_fmt(selective.get('area'))}")
    if "abstain_below" in selective:
        parts.append(
            f"--abstain-below {selective['abstain_below']:g}: {selective['n_abstained']} items abstained, "
            f"coverage {_fmt(selective['coverage'])}"
        )
    return parts
