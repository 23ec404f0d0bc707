"""Tables: tasks, items, run summaries, CheckEval dimensions and run comparisons."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.panel import Panel
from rich.table import Table

from cejudge_dspy.cli.display._text import _fmt
from cejudge_dspy.data import Item
from cejudge_dspy.tasks import TaskSpec


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
    """The paper-style table: metric per language with its 95% CI, and what each item counted as.

    Per row, `items` = `n` (scored) + `unparsed` + `gold ties` (pairwise only) + `excluded` (errors and
    items without a gold label); no CI below 5 scored items. Pairwise tables show accuracy and strict
    accuracy (unparsed counted wrong); the run's headline (strict under `--preset paper`) comes first,
    with the CI. The caption names the pairwise position statistics in words; README.md ("Reading a run
    table") explains each number."""
    metric = summary["metric"]
    pairwise = "share_final_A" in summary
    strict_first = pairwise and (summary.get("run") or {}).get("headline") == "strict"
    table = Table(title=title or f"{summary['task']} · {', '.join(summary.get('methods', []))}")
    heads = ["strict accuracy", "95% CI", "accuracy"] if strict_first else [metric, "95% CI"]
    if pairwise and not strict_first:
        heads.append("strict")
    columns = ["language", *heads, "items", "n", "unparsed"] + (["gold ties"] if pairwise else [])
    for col in [*columns, "excluded"]:
        table.add_column(col, justify="right" if col != "language" else "left")
    few = False

    def row(name: str, m: dict[str, Any]) -> None:
        nonlocal few
        c = m.get("counts") or {}
        strict = m.get("strict") or {}
        head = strict if strict_first else m
        if head.get("ci_low") is not None:
            ci = f"[{_fmt(head['ci_low'])}, {_fmt(head['ci_high'])}]"
        elif head.get("n", m["n"]) < 5:
            ci, few = "n < 5", True
        else:
            ci = "—"
        cells = [name, _fmt(head.get("value")), ci]
        if pairwise:
            cells.append(_fmt((m if strict_first else strict).get("value")))
        cells += [_fmt(c.get("items")), str(m["n"]), _fmt(c.get("unparsed"))]
        if pairwise:
            cells.append(_fmt(c.get("gold_ties")))
        excluded = c.get("errors", 0) + c.get("no_label", 0) if c else m["n_excluded"]
        table.add_row(*cells, str(excluded))

    for lang, m in summary.get("per_language", {}).items():
        row(lang, m)
    if "overall" in summary:
        row("[bold]all items[/]", summary["overall"])
    blank = [""] * (len(columns) - 1)
    if summary.get("per_language"):
        averages = [summary.get("strict_average"), summary.get("average")]
        if not strict_first:
            averages.reverse()
        cells = [_fmt(averages[0]), ""] + ([_fmt(averages[1])] if pairwise else [])
        table.add_row("[bold]average (macro)[/]", *cells, *blank[len(cells) :])
    elif summary.get("dimensions"):
        table.add_row("(labels are per dimension: see the table below)", *blank)
    caption = [
        f"items {summary['n_items']}",
        f"unparsed {summary['n_unparsed']}",
        f"errors {summary['n_error']}",
    ]
    if few:
        caption.append("no CI below 5 scored items")
    if "decided_by_grades" in summary:
        liked = summary.get("decided_by_likelihood", 0)
        caption.append(
            f"decided by the responses' own grades {summary['decided_by_grades']} of {summary['n_graded']}"
            + (f", by the likelihood tie-breaker {liked}" if liked else "")
            + " (no order shown; the position figures cover the rest)"
        )
    if checks := summary.get("decided_by_checks"):
        shown = ", ".join(f"{name} {n}" for name, n in checks.items())
        caption.append(f"scored lowest by a check, without an LLM judgment: {shown}")
    if "position_consistency" in summary:
        consistency = _fmt(summary["position_consistency"]["value"])
        caption.append(f"position consistency {consistency} (same pick in both orders)")
    if pairwise:
        first = _fmt(summary["share_shown_A"]["value"])
        caption.append(f"picked the response shown first {first} (0.5: no position bias)")
        caption.append(
            f"final verdict A {_fmt(summary['share_final_A']['value'])}"
            + (f", tie {_fmt(summary['share_tie']['value'])}" if "share_tie" in summary else "")
        )
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
    """Two runs on their common items: metric of each, agreement between them, and the test's p-value;
    pairwise, strict accuracy (unparsed counted wrong) of each with its own McNemar p. The caption names
    every setting the runs differ in (an ablation, the backbone, the rule)."""
    a, b = cmp["runs"]
    # Runs from before the decision rule were decided by the argmax (run_dir.LATER_KEYS).
    ra, rb = (f"{r['method']} ({r['lm']}, {r.get('decision') or 'argmax'} rule)" for r in (a, b))
    table = Table(title=f"{cmp['task']}: A = {ra} vs B = {rb}")
    by = cmp.get("by", "language")
    strict = any("strict_a" in row for row in cmp["rows"])
    columns = [by, "n", f"{cmp['metric']} A", f"{cmp['metric']} B", "agreement A~B", "test", "p"]
    columns += ["strict A", "strict B", "p (strict)"] if strict else []
    for col in columns:
        table.add_column(col, justify="left" if col == by else "right")
    for row in cmp["rows"]:
        test = row["test"]
        cells = [
            row["language"],
            str(row["n"]),
            _fmt(row["a"]["value"]),
            _fmt(row["b"]["value"]),
            _fmt(row["agreement"]["value"]),
            test["name"],
            _fmt(test.get("p_value")),
        ]
        if strict:
            cells += [_fmt(row[k].get("value")) for k in ("strict_a", "strict_b")]
            cells.append(_fmt(row["strict_test"].get("p_value")))
        table.add_row(*cells)
    caption = [f"common items {cmp['common_items']} · only in A {cmp['only_a']} · only in B {cmp['only_b']}"]
    if diffs := cmp.get("differences"):
        caption.append(
            "A and B differ in: " + ", ".join(f"{k} {va!r} → {vb!r}" for k, (va, vb) in diffs.items())
        )
    table.caption = "\n".join(caption)
    return table
