"""A panel run's tables: each member and each panel rule with its 95% CI, the paired test of each rule
against the best member, and the agreement across members (per run and per item)."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from cejudge_dspy.cli.display._text import _fmt, styled


def panel_tables(panel: dict[str, Any], metric: str) -> list[Table]:
    """The tables `evaluate` prints for a panel run (`summary.json`'s `panel`, metrics.panel_summary)."""
    return [_judges_table(panel, metric), _agreement_table(panel)]


def _ci(m: dict[str, Any]) -> str:
    if m.get("ci_low") is not None:
        return f"[{_fmt(m['ci_low'])}, {_fmt(m['ci_high'])}]"
    return "n < 5" if (m.get("n") or 0) < 5 else "—"


def _test_cell(test: dict[str, Any]) -> str:
    if test.get("value") is None:
        return test.get("reason") or "n/a"
    if test.get("p_value") is None:
        return f"{test['value']:+.3f} ({test.get('reason') or 'no p-value'})"
    return f"{test['value']:+.3f} (p = {_fmt(test.get('p_value'))})"


def _judges_table(panel: dict[str, Any], metric: str) -> Table:
    best = panel["best_member"]
    table = Table(title=f"panel · {metric} of each member and each panel rule")
    for col in ("judge", metric, "95% CI", "n", "with the panel", f"vs best member ({best})"):
        table.add_column(col, justify="left" if col == "judge" else "right")
    for name, m in panel["members"].items():
        versus = panel["members_vs_panel"].get(name) or {}
        mark = " (best)" if name == best else ""
        test = _test_cell(panel["member_tests"][name]) if name in panel.get("member_tests", {}) else ""
        table.add_row(
            f"{name}{mark}", _fmt(m.get("value")), _ci(m), str(m.get("n", 0)), _fmt(versus.get("value")), test
        )
    for name, m in panel["rules"].items():
        label = styled((f"panel: {name}", "bold"), " (headline)" if name == panel["headline_rule"] else "")
        value = _fmt(m.get("value")) if m.get("value") is not None else (m.get("reason") or "n/a")
        table.add_row(
            label, value, _ci(m), str(m.get("n", 0)), "", _test_cell(panel["tests"].get(name) or {})
        )
    stacked = panel["rules"].get("stacked") or {}
    if stacked.get("weights"):
        weights = ", ".join(f"{k} {v:.2f}" for k, v in stacked["weights"].items())
        table.caption = (
            f"stacked weights (fitted on all labelled items; scored {stacked['folds']}-fold): {weights}"
        )
    return table


def _agreement_table(panel: dict[str, Any]) -> Table:
    a = panel["agreement"]
    table = Table(title="panel · agreement across members")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("n", justify="right")
    for key, label in (("fleiss_kappa", "Fleiss' kappa"), ("krippendorff_alpha", "Krippendorff's alpha")):
        if key in a:
            m = a[key]
            value = _fmt(m.get("value")) if m.get("value") is not None else (m.get("reason") or "n/a")
            table.add_row(label, value, str(m.get("n", 0)))
    rows = [
        ("per item: mean share agreeing with the most common vote", a.get("mean_agreement")),
        ("per item: mean entropy of the votes (bits)", a.get("mean_entropy")),
        ("per item: mean standard deviation of the scores", a.get("mean_sd")),
        ("per item: mean range of the scores", a.get("mean_range")),
    ]
    for label, value in rows:
        if value is not None:
            table.add_row(label, _fmt(value), "")
    table.add_row("items every member agreed on", str(a.get("unanimous", 0)), "")
    table.add_row("items without a majority", str(a.get("no_majority", 0)), "")
    return table


def votes_table(result: Any, members: list[dict[str, Any]], item_id: str | None = None) -> Table:
    """One item's panel: each member's vote, p(A) or score, cost and time, then the panel's verdict with
    its agreement (`cejudge judge` with a panel)."""
    panel = result.details.get("panel") or {}
    pairwise = result.mode == "pairwise"
    table = Table(title="panel" + (f" · {item_id}" if item_id else ""))
    for col in (
        "member",
        "verdict" if pairwise else "score",
        "p(A)" if pairwise else "",
        "LM calls",
        "seconds",
    ):
        table.add_column(col, justify="left" if col == "member" else "right")
    for m in members:
        usage = ((m.get("result") or {}).get("usage")) or {}
        vote = panel.get("votes", {}).get(m["name"])
        shown = _fmt(vote) if vote is not None else (m.get("error") or m["status"])
        extra = _fmt(panel.get("p_a", {}).get(m["name"])) if pairwise else ""
        table.add_row(m["name"], shown, extra, _fmt(usage.get("calls")), _fmt(m.get("seconds")))
    if result.ok:
        headline = result.verdict if pairwise else _fmt(result.score)
        outcome = panel.get("outcome")
        said = f"{headline} ({outcome})" if outcome == "no majority" else str(headline)
        mean = f"mean p(A) {_fmt(panel.get('mean_p_a'))}" if pairwise else f"sd {_fmt(panel.get('sd'))}"
        table.add_row(
            Text("panel", style="bold"),
            Text(said, style="bold"),
            mean if pairwise else "",
            _fmt(result.usage.calls),
            "",
        )
        table.caption = (
            f"agreement {_fmt(panel.get('agreement'))} (share of {panel.get('voting')} voting members with "
            f"the most common vote) · entropy {_fmt(panel.get('entropy'))} bits"
            + ("" if pairwise else f" · {mean} · range {_fmt(panel.get('range'))}")
        )
    else:
        table.caption = f"no panel verdict: {result.error}"
    return table
