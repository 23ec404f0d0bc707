"""The page's charts: Altair (Vega-Lite) specifications rendered to SVG by vl-convert at build time.

The page then carries finished SVG, a few kilobytes a chart, and no charting JavaScript: it opens
without a network and draws nothing at load. Each function takes the plain data that
_report.py and `metrics.summarize` prepare and returns an SVG string.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cejudge_dspy.errors import CEJudgeError

INSTALL_HINT = "`cejudge view` needs the view extra (Altair, vl-convert): pip install 'cejudge-dspy[view]'"

# The page's palette, shared with view.css.
INK, MUTED, ACCENT, GRID = "#1f2933", "#616e7c", "#3b6fd8", "#e4e7eb"
OUTCOME_COLORS = {"yes": "#2f9e6e", "no": "#d9534f", "none": "#cbd2d9"}
RUN_COLORS = ["#3b6fd8", "#e8833a", "#2f9e6e", "#9b59b6", "#d9534f", "#616e7c"]
MAX_MATRIX_ITEMS = 200


def require_libraries() -> None:
    """One clear line when the extra is missing (before any work is done)."""
    try:
        import altair  # noqa: F401
        import vl_convert  # noqa: F401
    except ImportError as exc:
        raise CEJudgeError(INSTALL_HINT) from exc


def _alt() -> Any:
    import altair as alt

    return alt


def _svg(chart: Any) -> str:
    import vl_convert

    spec = chart.configure(
        font="system-ui, -apple-system, Segoe UI, Roboto, sans-serif",
        background="transparent",
        axis={"labelColor": MUTED, "titleColor": INK, "gridColor": GRID, "domainColor": GRID},
        view={"stroke": None},
        title={"color": INK, "fontSize": 13, "anchor": "start", "fontWeight": 600},
        legend={"labelColor": MUTED, "titleColor": INK},
    ).to_dict()
    return vl_convert.vegalite_to_svg(spec)


def _domain(metric: str) -> list[float]:
    return [0.0, 1.0] if metric == "accuracy" else [-1.0, 1.0]


def metric_chart(summary: Mapping[str, Any], metric: str) -> str | None:
    """The task's metric per language (pair) with its 95% bootstrap CI, and the macro average as a rule."""
    rows = [
        {"language": lang, **{k: v.get(k) for k in ("value", "ci_low", "ci_high", "n")}}
        for lang, v in summary.get("per_language", {}).items()
        if v.get("value") is not None
    ]
    if not rows:
        return None
    alt = _alt()
    base = alt.Chart(alt.Data(values=rows)).encode(
        y=alt.Y("language:N", title=None, sort=None),
    )
    x = alt.X("value:Q", title=metric, scale=alt.Scale(domain=_domain(metric)))
    bars = base.mark_rule(strokeWidth=2, color=MUTED).encode(
        x=alt.X("ci_low:Q", scale=alt.Scale(domain=_domain(metric))), x2="ci_high:Q"
    )
    dots = base.mark_point(filled=True, size=90, color=ACCENT, opacity=1).encode(x=x)
    labels = base.mark_text(align="left", dx=8, dy=-9, color=INK, fontSize=11).encode(
        x=x, text=alt.Text("value:Q", format=".3f")
    )
    layers = [bars, dots, labels]
    if summary.get("average") is not None:
        avg = alt.Chart(alt.Data(values=[{"average": summary["average"]}]))
        layers.append(avg.mark_rule(strokeDash=[4, 3], color="#e8833a").encode(x="average:Q"))
    height = max(60, 34 * len(rows))
    title = f"{metric} per language, 95% CI (dashed: macro average)"
    return _svg(alt.layer(*layers).properties(width=420, height=height, title=title))


def confusion_chart(conf: Mapping[str, Any]) -> str:
    """Gold label (rows) against the judge's verdict (columns), counts in the cells."""
    alt = _alt()
    cells = [
        {"gold": g, "verdict": v, "count": conf["counts"][i][j]}
        for i, g in enumerate(conf["gold"])
        for j, v in enumerate(conf["verdict"])
    ]
    base = alt.Chart(alt.Data(values=cells)).encode(
        x=alt.X("verdict:N", sort=conf["verdict"], title="judge verdict", axis=alt.Axis(orient="top")),
        y=alt.Y("gold:N", sort=conf["gold"], title="human label"),
    )
    rect = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color("count:Q", scale=alt.Scale(scheme="blues"), legend=None)
    )
    text = base.mark_text(fontSize=14, fontWeight=600).encode(
        text="count:Q",
        color=alt.condition(
            alt.datum.count > max(1, _max_count(conf)) / 2, alt.value("white"), alt.value(INK)
        ),
    )
    return _svg((rect + text).properties(width=240, height=170, title="Verdict vs human label"))


def _max_count(conf: Mapping[str, Any]) -> int:
    return max((n for row in conf["counts"] for n in row), default=0)


def scatter_chart(points: Sequence[Mapping[str, Any]], summary: Mapping[str, Any], metric: str) -> str | None:
    """Judge score against the human score, one panel per language (pair), its correlation in the title."""
    if not points:
        return None
    alt = _alt()
    per_language = summary.get("per_language", {})
    values = []
    for p in points:
        v = per_language.get(p["language"], {}).get("value")
        panel = f"{p['language']}: {metric} {v:.3f}" if v is not None else f"{p['language']}: {metric} n/a"
        values.append({**p, "panel": panel})
    chart = (
        alt.Chart(alt.Data(values=values))
        .mark_circle(size=46, opacity=0.55, color=ACCENT)
        .encode(
            x=alt.X("human:Q", title="human score", scale=alt.Scale(zero=False)),
            y=alt.Y("judge:Q", title="judge score", scale=alt.Scale(zero=False)),
        )
        .properties(width=230, height=190)
        .facet(facet=alt.Facet("panel:N", title=None, header=alt.Header(labelFontWeight=600)), columns=3)
    )
    return _svg(chart.properties(title="Judge vs human, per language"))


def dimension_chart(dimensions: Mapping[str, Any]) -> str | None:
    """CheckEval: sample-level Spearman, Kendall and Pearson with humans per dimension."""
    rows = [
        {"dimension": dim, "correlation": name, "value": row[name]["value"]}
        for dim, row in dimensions.items()
        for name in ("spearman", "kendall", "pearson")
        if isinstance(row.get(name), Mapping) and row[name].get("value") is not None
    ]
    if not rows:
        return None
    alt = _alt()
    chart = (
        alt.Chart(alt.Data(values=rows))
        .mark_bar()
        .encode(
            y=alt.Y("dimension:N", title=None, sort=list(dimensions)),
            yOffset="correlation:N",
            x=alt.X("value:Q", title="correlation with humans", scale=alt.Scale(domain=[-1, 1])),
            color=alt.Color("correlation:N", scale=alt.Scale(range=RUN_COLORS[:3]), title=None),
        )
        .properties(width=380, height=max(80, 46 * len(dimensions)), title="Per dimension (sample level)")
    )
    return _svg(chart)


def answer_matrix_chart(matrix: Mapping[str, Any]) -> str | None:
    """CheckEval's answers: questions (rows) x items (columns); yes, no, or unanswered."""
    if not matrix["items"]:
        return None
    alt = _alt()
    items = matrix["items"][:MAX_MATRIX_ITEMS]
    shown = set(items)
    position = {item: n for n, item in enumerate(items, 1)}
    questions = matrix["questions"]
    values = [
        {
            "q": _question_label(c["q"], questions[c["q"]]),
            "item": position[c["item"]],
            "answer": c["answer"] or "none",
        }
        for c in matrix["cells"]
        if c["item"] in shown
    ]
    cell = 10 if len(items) > 40 else 16
    title = "Answers: questions x items" + (
        f" (first {MAX_MATRIX_ITEMS} of {len(matrix['items'])} items)"
        if len(matrix["items"]) > len(items)
        else ""
    )
    chart = (
        alt.Chart(alt.Data(values=values))
        .mark_rect(stroke="white", strokeWidth=1)
        .encode(
            x=alt.X("item:O", title="item (table order)", axis=alt.Axis(labelAngle=0, labelOverlap=True)),
            y=alt.Y("q:N", title=None, axis=alt.Axis(labelLimit=380)),
            color=alt.Color(
                "answer:N",
                scale=alt.Scale(domain=list(OUTCOME_COLORS), range=list(OUTCOME_COLORS.values())),
                title="answer",
            ),
        )
        # vl-convert measures labels in its own font; the browser's may be wider: room on both sides.
        .properties(
            width=cell * len(items),
            height=14 * len(questions),
            title=title,
            padding={"left": 60, "right": 30},
        )
    )
    return _svg(chart)


def _question_label(n: int, q: Mapping[str, Any]) -> str:
    return f"{n + 1:02d} {q['dimension']}: {_short(q['question'])}"


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def comparison_chart(runs: Sequence[Mapping[str, Any]], metric: str) -> str | None:
    """Several runs' metric per language side by side, with CIs."""
    rows = [
        {"run": run["name"], "language": lang, **{k: v.get(k) for k in ("value", "ci_low", "ci_high")}}
        for run in runs
        for lang, v in [
            *run["summary"].get("per_language", {}).items(),
            ("all", run["summary"].get("overall", {})),
        ]
        if v and v.get("value") is not None
    ]
    if not rows:
        return None
    alt = _alt()
    names = [run["name"] for run in runs]
    color = alt.Color("run:N", scale=alt.Scale(domain=names, range=RUN_COLORS[: len(names)]), title="run")
    domain = alt.Scale(domain=_domain(metric))
    base = alt.Chart(alt.Data(values=rows)).encode(
        y=alt.Y("language:N", title=None, sort=None), yOffset=alt.YOffset("run:N", sort=names), color=color
    )
    rules = base.mark_rule(strokeWidth=2).encode(x=alt.X("ci_low:Q", scale=domain), x2="ci_high:Q")
    dots = base.mark_point(filled=True, size=80, opacity=1).encode(
        x=alt.X("value:Q", title=metric, scale=domain)
    )
    languages = len({r["language"] for r in rows})
    height = max(80, 22 * len(names) * languages)
    return _svg((rules + dots).properties(width=460, height=height, title=f"{metric} per language, 95% CI"))


def risk_coverage_chart(selective: Mapping[str, Any]) -> str | None:
    """Selective judging: the metric on the most confident items at each coverage (the summary's
    curve), pairwise with the oracle order's accuracy dashed, and the abstention threshold's coverage as
    a rule when the run has one."""
    metric = selective["metric"]
    rows = [
        {"coverage": r["coverage"], "value": r["value"], "curve": "judge's confidence order"}
        for r in selective["curve"]
        if r["value"] is not None
    ]
    rows += [
        {"coverage": r["coverage"], "value": r["optimal"], "curve": "oracle order"}
        for r in selective["curve"]
        if r.get("optimal") is not None
    ]
    if not rows:
        return None
    alt = _alt()
    names = ["judge's confidence order", "oracle order"]
    line = (
        alt.Chart(alt.Data(values=rows))
        .mark_line(point=True)
        .encode(
            x=alt.X("coverage:Q", title="coverage (share of items kept)", scale=alt.Scale(domain=[0, 1])),
            y=alt.Y("value:Q", title=metric, scale=alt.Scale(domain=_domain(metric))),
            color=alt.Color("curve:N", scale=alt.Scale(domain=names, range=[ACCENT, MUTED]), title=None),
            strokeDash=alt.StrokeDash(
                "curve:N", scale=alt.Scale(domain=names, range=[[1, 0], [4, 3]]), title=None
            ),
        )
    )
    layers = [line]
    if selective.get("coverage") is not None:
        cut = alt.Chart(alt.Data(values=[{"coverage": selective["coverage"]}]))
        layers.append(cut.mark_rule(strokeDash=[2, 2], color="#e8833a").encode(x="coverage:Q"))
    if metric == "accuracy":
        note = f"AURC {selective['aurc']:.3f}, oracle {selective['optimal_aurc']:.3f}"
    else:
        note = f"mean Kendall over coverage {_num_text(selective.get('area'))}"
    if len(layers) > 1:
        note += f"; orange: what --abstain-below {selective['abstain_below']:g} keeps"
    title = alt.TitleParams(f"{metric} on the most confident items", subtitle=note, subtitleColor=MUTED)
    return _svg(alt.layer(*layers).properties(width=420, height=220, title=title))


def _num_text(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
