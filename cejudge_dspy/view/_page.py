"""One self-contained HTML page for one or more runs: the data as JSON, the charts as SVG, and the
page's own stylesheet and script, all inlined, so it opens from disk with no network.

`page_data` gathers what the page shows (from _report.py); `render_page` inlines it into
assets/page.html with assets/view.css and assets/view.js.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from cejudge_dspy.files import make_dirs, write_file_atomic
from cejudge_dspy.metrics import compare_runs
from cejudge_dspy.view import _charts as charts
from cejudge_dspy.view._item_rows import csv_text, filter_options, item_rows
from cejudge_dspy.view._report import answer_matrix, confusion, disagreements, judge_vs_human
from cejudge_dspy.view._run import ViewRun, overview


def page_data(runs: Sequence[ViewRun], *, n_resamples: int = 1000) -> dict[str, Any]:
    """Everything the page shows. Item texts are stored once (runs of one task share them); each run
    holds its rows, full results, summary and charts."""
    items: dict[str, dict[str, Any]] = {}
    out_runs, all_rows = [], []
    for run in runs:
        rows = item_rows(run.records, run.spec, run.name, run.abstained)
        all_rows += rows
        for r in run.records:
            items.setdefault(r.id, r.item.to_dict())
        out_runs.append(
            {
                "overview": overview(run),
                "summary": run.summary,
                "dimensions": run.dimensions,
                "rows": rows,
                "filters": filter_options(rows),
                "records": {
                    r.id: {
                        "status": r.status,
                        "error": r.error,
                        "seconds": r.seconds,
                        "result": r.result.to_dict() if r.result else None,
                        # A panel's members, each with its own result (the drawer lists their votes).
                        **({"members": r.members} if r.members is not None else {}),
                    }
                    for r in run.records
                },
                "charts": _run_charts(run),
            }
        )
    return {
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runs": out_runs,
        "items": items,
        "comparison": _comparison(runs, out_runs, n_resamples) if len(runs) > 1 else None,
        "csv": csv_text(all_rows),
    }


def _run_charts(run: ViewRun) -> dict[str, str]:
    metric, summary = run.spec.metric, run.summary
    drawn: dict[str, str | None] = {"metric": charts.metric_chart(summary, metric)}
    if run.spec.mode == "pairwise":
        drawn["confusion"] = charts.confusion_chart(confusion(run.records))
    else:
        drawn["scatter"] = charts.scatter_chart(judge_vs_human(run.records, run.spec), summary, metric)
    if summary.get("dimensions"):
        drawn["dimensions"] = charts.dimension_chart(summary["dimensions"])
    if (selective := summary.get("selective")) and selective["n"] > selective["n_without_confidence"]:
        drawn["selective"] = charts.risk_coverage_chart(selective)
    matrix = answer_matrix(run.records)
    if matrix["items"]:
        drawn["answers"] = charts.answer_matrix_chart(matrix)
    return {k: v for k, v in drawn.items() if v}


def _comparison(runs: Sequence[ViewRun], out_runs: list[dict[str, Any]], n_resamples: int) -> dict[str, Any]:
    tasks = {run.spec.name for run in runs}
    if len(tasks) > 1:
        return {"note": f"runs judge different tasks ({', '.join(sorted(tasks))}); nothing to compare"}
    first = runs[0]
    tests = [
        {"a": first.name, "b": other.name, **compare_runs(first.path, other.path, n_resamples=n_resamples)}
        for other in runs[1:]
    ]
    chart_runs = [{"name": run.name, "summary": run.summary} for run in runs]
    return {
        "metric": first.spec.metric,
        "names": [run.name for run in runs],
        "tests": tests,
        "disagreements": disagreements(runs),
        "chart": charts.comparison_chart(chart_runs, first.spec.metric),
    }


def _asset(name: str) -> str:
    return resources.files("cejudge_dspy.view").joinpath("assets", name).read_text(encoding="utf-8")


def _script_json(data: Any) -> str:
    """JSON safe inside <script>: no `</script>`, no HTML comment openers, no JS line separators."""
    text = json.dumps(_finite(data), ensure_ascii=False, allow_nan=False, default=str)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _finite(value: Any) -> Any:
    """NaN and infinities (a metric with no value) as null: JSON has no spelling for them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def render_page(data: dict[str, Any], title: str) -> str:
    return Template(_asset("page.html")).substitute(
        title=_escape(title), css=_asset("view.css"), js=_asset("view.js"), data=_script_json(data)
    )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def page_title(runs: Sequence[ViewRun]) -> str:
    names = " vs ".join(run.name for run in runs)
    return f"{runs[0].spec.name} · {names} · cejudge view"


def write_page(runs: Sequence[ViewRun], out: Path, *, n_resamples: int = 1000) -> dict[str, Any]:
    data = page_data(runs, n_resamples=n_resamples)
    make_dirs(out.parent)  # a read-only disk or a file in the way: one line
    # view.html lives in a run directory: a symlink placed there is refused, never followed (runs).
    write_file_atomic(out, render_page(data, page_title(runs)), fsync=False)
    return data
