"""Tables: tasks, items, run summaries, CheckEval dimensions and run comparisons."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from cejudge_dspy.cli.display._text import _fmt, styled
from cejudge_dspy.tasks import TaskSpec

if TYPE_CHECKING:  # annotations only: `cejudge tasks` lists tasks without importing DSPy (data does)
    from cejudge_dspy.data import Item


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
        language = item.language + (f" → {item.response_language}" if item.response_language else "")
        rows = [("language", language), ("label", str(item.label)), ("instruction", _clip(item.instruction))]
        if item.mode == "pairwise":
            rows += [("response A", _clip(item.response_a)), ("response B", _clip(item.response_b))]
        else:
            rows.append(("response", _clip(item.response)))
        # Styled as Text, the data literal: markup is off and the console escapes control characters.
        body = Text("\n").join(styled((name, "bold"), " ", value) for name, value in rows)
        panels.append(Panel(body, title=f"{spec.name} · {item.id}"))
    return panels


def _clip(text: str | None, limit: int = 400) -> str:
    text = text or ""
    return text if len(text) <= limit else text[:limit] + " …"


def summary_table(summary: dict[str, Any], title: str | None = None) -> Table:
    """The paper-style table: metric per language with its 95% CI, and what each item counted as.

    Per row, `items` = `n` (scored) + `unparsed` + `gold ties` (pairwise only) + `abstained` (with
    `--abstain-below` only) + `excluded` (errors and items without a gold label); no CI below 5 scored
    items. Pairwise tables show accuracy and strict
    accuracy (unparsed counted wrong); the run's headline (strict under `--preset paper`) comes first,
    with the CI. The caption names the pairwise position statistics in words; README.md ("Reading a run
    table") explains each number."""
    layout = _Layout.of(summary)
    table = Table(title=title or f"{summary['task']} · {', '.join(summary.get('methods', []))}")
    for col in [*layout.columns, "excluded"]:
        table.add_column(col, justify="right" if col != "language" else "left")
    rows = list(summary.get("per_language", {}).items())
    if "overall" in summary:
        rows.append((Text("all items", style="bold"), summary["overall"]))
    few = False
    for name, m in rows:
        cells, no_ci = _metric_row(name, m, layout)
        table.add_row(*cells)
        few = few or no_ci
    _add_average_row(table, summary, layout)
    table.caption = " · ".join(_summary_caption(summary, pairwise=layout.pairwise, few=few))
    return table


@dataclass(frozen=True)
class _Layout:
    """The metric columns of a summary table: pairwise tables add strict accuracy (unparsed counted
    wrong) and gold ties; `strict_first` when the run's headline is strict (`--preset paper`)."""

    metric: str
    pairwise: bool
    strict_first: bool
    abstaining: bool = False  # a selective summary (`--abstain-below`): an `abstained` column

    @classmethod
    def of(cls, summary: dict[str, Any]) -> _Layout:
        pairwise = "share_final_A" in summary
        strict_first = pairwise and (summary.get("run") or {}).get("headline") == "strict"
        return cls(summary["metric"], pairwise, strict_first, "n_abstained" in summary)

    @property
    def columns(self) -> list[str]:
        """All but `excluded`, the last column."""
        heads = ["strict accuracy", "95% CI", "accuracy"] if self.strict_first else [self.metric, "95% CI"]
        if self.pairwise and not self.strict_first:
            heads.append("strict")
        tail = (["gold ties"] if self.pairwise else []) + (["abstained"] if self.abstaining else [])
        return ["language", *heads, "items", "n", "unparsed", *tail]


def _metric_row(name: str, m: dict[str, Any], layout: _Layout) -> tuple[list[str], bool]:
    """The cells of one language's row (or all items'), and whether its CI is missing for too few items."""
    c = m.get("counts") or {}
    strict = m.get("strict") or {}
    head = strict if layout.strict_first else m
    ci, few = _ci_cell(head, m["n"])
    cells = [name, _fmt(head.get("value")), ci]
    if layout.pairwise:
        cells.append(_fmt((m if layout.strict_first else strict).get("value")))
    cells += [_fmt(c.get("items")), str(m["n"]), _fmt(c.get("unparsed"))]
    if layout.pairwise:
        cells.append(_fmt(c.get("gold_ties")))
    if layout.abstaining:
        cells.append(_fmt(c.get("abstained")))
    excluded = c.get("errors", 0) + c.get("no_label", 0) if c else m["n_excluded"]
    return [*cells, str(excluded)], few


def _ci_cell(head: dict[str, Any], n: int) -> tuple[str, bool]:
    """The headline's 95% CI, or why there is none (True: fewer than 5 scored items)."""
    if head.get("ci_low") is not None:
        return f"[{_fmt(head['ci_low'])}, {_fmt(head['ci_high'])}]", False
    if head.get("n", n) < 5:
        return "n < 5", True
    return "—", False


def _add_average_row(table: Table, summary: dict[str, Any], layout: _Layout) -> None:
    """The macro average over languages, headline first; per-dimension labels get a note instead."""
    blank = [""] * (len(layout.columns) - 1)
    if summary.get("per_language"):
        averages = [summary.get("strict_average"), summary.get("average")]
        if not layout.strict_first:
            averages.reverse()
        cells = [_fmt(averages[0]), ""] + ([_fmt(averages[1])] if layout.pairwise else [])
        table.add_row(Text("average (macro)", style="bold"), *cells, *blank[len(cells) :])
    elif summary.get("dimensions"):
        table.add_row("(labels are per dimension: see the table below)", *blank)


def _summary_caption(summary: dict[str, Any], *, pairwise: bool, few: bool) -> list[str]:
    """The caption's parts: the run's counts, how verdicts were decided, the position statistics, the
    LM calls per item."""
    caption = [
        f"items {summary['n_items']}",
        f"unparsed {summary['n_unparsed']}",
        f"errors {summary['n_error']}",
    ]
    if "n_abstained" in summary:  # a selective summary: the items left to a person
        below = summary["selective"]["abstain_below"]
        caption.append(f"abstained {summary['n_abstained']} (confidence below {below:g})")
    if few:
        caption.append("no CI below 5 scored items")
    caption += _decision_notes(summary)
    caption += _position_notes(summary, pairwise=pairwise)
    usage = summary.get("usage", {})
    caption.append(f"LM calls/item {_fmt(usage.get('calls_per_item'), 1)}")
    return caption


def _decision_notes(summary: dict[str, Any]) -> list[str]:
    """Verdicts decided without the judge's comparison: by the responses' grades, or by a check."""
    notes = []
    if "decided_by_grades" in summary:
        liked = summary.get("decided_by_likelihood", 0)
        notes.append(
            f"decided by the responses' own grades {summary['decided_by_grades']} of {summary['n_graded']}"
            + (f", by the likelihood tie-breaker {liked}" if liked else "")
            + " (no order shown; the position figures cover the rest)"
        )
    if checks := summary.get("decided_by_checks"):
        shown = ", ".join(f"{name} {n}" for name, n in checks.items())
        notes.append(f"scored lowest by a check, without an LLM judgment: {shown}")
    return notes


def _position_notes(summary: dict[str, Any], *, pairwise: bool) -> list[str]:
    """Position consistency, bias towards the response shown first, and the final verdicts' shares."""
    notes = []
    if "position_consistency" in summary:
        consistency = _fmt(summary["position_consistency"]["value"])
        notes.append(f"position consistency {consistency} (same pick in both orders)")
    if pairwise:
        first = _fmt(summary["share_shown_A"]["value"])
        notes.append(f"picked the response shown first {first} (0.5: no position bias)")
        notes.append(
            f"final verdict A {_fmt(summary['share_final_A']['value'])}"
            + (f", tie {_fmt(summary['share_tie']['value'])}" if "share_tie" in summary else "")
        )
    return notes


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
    # Runs from before the decision rule were decided by the argmax (`LATER_KEYS` in runs/_identity.py).
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
            "A and B differ in: "
            + ", ".join(f"{k} {_shown(va)} → {_shown(vb)}" for k, (va, vb) in diffs.items())
        )
    table.caption = "\n".join(caption)
    return table


def _shown(value: Any) -> str:
    """A setting as the comparison's caption says it: a panel (run.json's `panel`) by its members' names."""
    if isinstance(value, list) and all(isinstance(m, dict) and "name" in m for m in value):
        return "(" + " + ".join(str(m["name"]) for m in value) + ")"  # no brackets: rich reads them as markup
    return repr(value)
