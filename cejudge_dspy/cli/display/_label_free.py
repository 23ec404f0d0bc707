"""The table of a run's items without a gold label: verdict shares (pairwise) or the score distribution
(pointwise) per language, with their 95% intervals, from the summary's `label_free` part."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from cejudge_dspy.cli.display._tables import _summary_caption
from cejudge_dspy.cli.display._text import _fmt


def label_free_table(summary: dict[str, Any]) -> Table | None:
    """None when every item has a gold label. The caption says why there is no accuracy or correlation
    and, for a partly labelled run, how many items the labelled table scored."""
    part = summary.get("label_free")
    if not part:
        return None
    pairwise = "share_final_A" in summary
    what = "verdict shares" if pairwise else "score distribution"
    table = Table(title=f"{summary['task']} · {part['n_items']} items without a gold label: {what}")
    heads = ["A", "B", "tie"] if pairwise else ["mean score", "sd", "median", "range"]
    for col in ["language", *heads, "items", "judged"]:
        # A value over its interval: wide enough for "[0.000, 0.434]" on one line.
        table.add_column(
            col, justify="left" if col == "language" else "right", min_width=14 if col in heads else None
        )
    rows = [*part["per_language"].items(), ("[bold]all items[/]", part["overall"])]
    for name, row in rows:
        cells = _share_cells(row) if pairwise else _score_cells(row)
        table.add_row(name, *cells, str(row["counts"]["items"]), str(row["counts"]["judged"]))
    caption = [
        "no accuracy or correlation: these items have no gold label to measure against",
        "share [95% Wilson interval]" if pairwise else "mean [95% bootstrap interval; none below 5 items]",
        "judged: items with a verdict (unparsed and errored items have none)",
    ]
    labelled = summary["n_items"] - part["n_items"]
    if labelled:
        scored = (summary.get("overall") or {}).get("n")
        caption.append(f"the table above scored {_fmt(scored)} of the {labelled} labelled items")
    else:  # no labelled table was printed: the run's own figures go here
        caption += _summary_caption(summary, pairwise=pairwise, few=False)
    table.caption = " · ".join(caption)
    return table


def _with_interval(m: dict[str, Any]) -> str:
    """A value over its interval, on two lines so that a row fits a terminal."""
    if m.get("ci_low") is None:
        return _fmt(m.get("value"))
    return f"{_fmt(m.get('value'))}\n[{_fmt(m['ci_low'])}, {_fmt(m['ci_high'])}]"


def _share_cells(row: dict[str, Any]) -> list[str]:
    return [_with_interval(row[label]) for label in ("A", "B", "tie")]


def _score_cells(row: dict[str, Any]) -> list[str]:
    q = row.get("quartiles") or {}
    span = f"{_fmt(q['min'], 2)}-{_fmt(q['max'], 2)}" if q else "n/a"
    return [_with_interval(row["mean"]), _fmt(row.get("sd")), _fmt(q.get("median")), span]
