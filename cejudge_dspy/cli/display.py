"""Rich rendering for the CLI: verdict panels, run tables, task listings. The only module (with the
CLI) that imports rich; everything it shows comes from JudgeResult, summaries and TaskSpec."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from cejudge_dspy.items import Item
from cejudge_dspy.results import JudgeResult
from cejudge_dspy.tasks import TaskSpec


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _bullets(items: Sequence[str]) -> Text:
    return Text("\n".join(f"• {q}" for q in items) or "(none)")


def verdict_panel(result: JudgeResult, spec: TaskSpec, item_id: str | None = None) -> Panel:
    """One judged item: verdict or score, consistency, feedback, and the checklists it used."""
    title = f"{spec.name} · {result.method}" + (f" · {item_id}" if item_id else "")
    if not result.ok:
        body = Text(f"UNPARSED at {result.error_stage}: {result.error}", style="bold red")
        return Panel(body, title=title, border_style="red")
    if result.mode == "pairwise":
        head = Text(f"Verdict: {result.verdict}", style="bold green" if result.consistent else "bold yellow")
        if result.consistent is False:
            head.append(
                "  (orders disagree: " + ", ".join(f"{o.order}→{o.verdict}" for o in result.orders) + ")"
            )
        elif result.consistent:
            head.append("  (consistent across both orders)")
    else:
        lo, hi = spec.scale_range if spec.scale else (0, 1)
        head = Text(f"Score: {_fmt(result.score)} / {hi}", style="bold green")
        if result.dimension_scores:
            head.append("  " + ", ".join(f"{k} {_fmt(v, 2)}" for k, v in result.dimension_scores.items()))
    parts: list[Any] = [head, Text(""), Text("Feedback", style="bold"), Text(result.feedback or "(none)")]
    if result.answers:
        parts += [Text(""), Text("Checklist answers", style="bold"), _bullets(result.answers)]
    for name, checklist in result.checklists.items():
        parts += [Text(""), Text(f"Checklist ({name})", style="bold"), _bullets(checklist)]
    u = result.usage
    parts += [
        Text(""),
        Text(
            f"LM calls {u.calls} (cached {u.cached}, reused {u.reused}) · tokens "
            f"{u.prompt_tokens} in / {u.completion_tokens} out",
            style="dim",
        ),
    ]
    return Panel(Group(*parts), title=title, border_style="green")


def tasks_table(tasks: dict[str, TaskSpec]) -> Table:
    table = Table(title="Declared tasks (programs/)")
    for col in ("task", "mode", "metric", "dataset", "description"):
        table.add_column(col)
    for name, spec in sorted(tasks.items()):
        source = spec.dataset.hub_id or "local files"
        table.add_row(name, spec.mode, spec.metric, source, spec.description)
    return table


def items_panels(spec: TaskSpec, items: Sequence[Item]) -> list[Panel]:
    panels = []
    for item in items:
        rows = [
            f"[bold]language[/] {item.language}"
            + (f" → {item.response_language}" if item.response_language else ""),
            f"[bold]label[/] {item.label}",
            f"[bold]instruction[/] {_clip(item.instruction)}",
        ]
        if item.mode == "pairwise":
            rows += [
                f"[bold]response A[/] {_clip(item.response_a)}",
                f"[bold]response B[/] {_clip(item.response_b)}",
            ]
        else:
            rows.append(f"[bold]response[/] {_clip(item.response)}")
        panels.append(Panel("\n".join(rows), title=f"{spec.name} · {item.id}"))
    return panels


def _clip(text: str | None, limit: int = 400) -> str:
    text = (text or "").replace("[", "\\[")
    return text if len(text) <= limit else text[:limit] + " …"


def summary_table(summary: dict[str, Any], title: str | None = None) -> Table:
    """The paper-style table: metric per language with its 95% CI, average, unparsed, position stats."""
    metric = summary["metric"]
    table = Table(title=title or f"{summary['task']} · {', '.join(summary.get('methods', []))}")
    for col in ("language", metric, "95% CI", "n", "excluded"):
        table.add_column(col, justify="right" if col != "language" else "left")
    for lang, m in summary.get("per_language", {}).items():
        table.add_row(
            lang,
            _fmt(m["value"]),
            f"[{_fmt(m['ci_low'])}, {_fmt(m['ci_high'])}]",
            str(m["n"]),
            str(m["n_excluded"]),
        )
    if "overall" in summary:
        m = summary["overall"]
        table.add_row(
            "[bold]all items[/]",
            _fmt(m["value"]),
            f"[{_fmt(m['ci_low'])}, {_fmt(m['ci_high'])}]",
            str(m["n"]),
            str(m["n_excluded"]),
        )
    if summary.get("per_language"):
        table.add_row("[bold]average (macro)[/]", _fmt(summary.get("average")), "", "", "")
    elif summary.get("dimensions"):
        table.add_row("(labels are per dimension: see the table below)", "", "", "", "")
    caption = [
        f"items {summary['n_items']}",
        f"unparsed {summary['n_unparsed']}",
        f"errors {summary['n_error']}",
    ]
    if "position_consistency" in summary:
        caption.append(f"position consistency {_fmt(summary['position_consistency']['value'])}")
    if "share_shown_A" in summary:
        caption.append(f"A said in shown order {_fmt(summary['share_shown_A']['value'])}")
        caption.append(f"final A {_fmt(summary['share_final_A']['value'])}")
    usage = summary.get("usage", {})
    caption.append(f"LM calls/item {_fmt(usage.get('calls_per_item'), 1)}")
    table.caption = " · ".join(caption)
    return table


_WHY = {  # correlations take (judge, human): x is the judge's side
    "constant x: correlation undefined": "n/a, the judge gave every item the same score",
    "constant y: correlation undefined": "n/a, the human scores are all equal",
}


def _why(reason: str) -> str:
    return _WHY.get(reason, reason)


def dimension_tables(summary: dict[str, Any]) -> Table | None:
    dims = summary.get("dimensions")
    if not dims:
        return None
    table = Table(title="Correlation with humans per dimension (sample level | per document)")
    table.add_column("dimension")
    for name in ("spearman", "kendall", "pearson"):
        table.add_column(name, justify="right")
    for dim, row in dims.items():
        cells = [
            f"{_fmt(row[n]['value'])} | {_fmt((row.get(f'{n}_per_document') or {}).get('value'))}"
            for n in ("spearman", "kendall", "pearson")
        ]
        table.add_row(dim, *cells)
    # Say why a cell is n/a: "constant x" (the judge gave every item the same score) is a finding.
    reasons = {
        f"{dim}: {_why(row['spearman']['reason'])}" for dim, row in dims.items() if row["spearman"]["reason"]
    }
    per_doc = {(row.get("spearman_per_document") or {}).get("reason") for row in dims.values()} - {None}
    table.caption = "; ".join(sorted(reasons) + [f"per document: {r}" for r in sorted(per_doc)]) or None
    return table


def compare_table(cmp: dict[str, Any]) -> Table:
    """Two runs on their common items: metric of each, agreement between them, and the test's p-value."""
    a, b = cmp["runs"]
    table = Table(title=f"{cmp['task']}: A = {a['method']} ({a['lm']}) vs B = {b['method']} ({b['lm']})")
    for col in ("language", "n", f"{cmp['metric']} A", f"{cmp['metric']} B", "agreement A~B", "test", "p"):
        table.add_column(col, justify="left" if col == "language" else "right")
    for row in cmp["rows"]:
        test = row["test"]
        table.add_row(
            row["language"],
            str(row["n"]),
            _fmt(row["a"]["value"]),
            _fmt(row["b"]["value"]),
            _fmt(row["agreement"]["value"]),
            test["name"],
            _fmt(test.get("p_value")),
        )
    table.caption = (
        f"common items {cmp['common_items']} · only in A {cmp['only_a']} · only in B {cmp['only_b']}"
    )
    return table


def console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False)
