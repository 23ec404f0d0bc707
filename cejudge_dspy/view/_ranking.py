"""The page of a ranking run (`cejudge view` on a directory `cejudge rank` wrote): the systems ranked with
their intervals (each drawn as a bar on one axis), the win-rate matrix, ties and position bias, the ranking
per language, and the agreement with the humans' ranking where the answers carried human scores.

Static HTML with its stylesheet inlined: it opens from disk, with no script and no network. The run's
records are an ordinary results.jsonl; the page reads ranking.json, which `cejudge rank` wrote.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.files import write_file_atomic
from cejudge_dspy.rank import read_ranking

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.bar{width:18rem;position:relative}
.ci{position:absolute;top:.55rem;height:.4rem;background:#9bbbe0}
.pt{position:absolute;top:.35rem;width:.2rem;height:.8rem;background:#1f4e8c}
.muted{color:#666}
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _n(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _bar(value: float | None, ci: list[float] | None, low: float, high: float) -> str:
    """The value and its interval on the axis [low, high], as positioned boxes (no script, no image)."""
    span = (high - low) or 1.0

    def at(x: float) -> float:
        return 100 * (x - low) / span

    parts = []
    if ci:
        parts.append(f"<div class=ci style='left:{at(ci[0]):.1f}%;width:{at(ci[1]) - at(ci[0]):.1f}%'></div>")
    if value is not None:
        parts.append(f"<div class=pt style='left:{at(value):.1f}%'></div>")
    return f"<td class=bar>{''.join(parts)}</td>"


def _ranking_table(summary: dict[str, Any]) -> str:
    pairwise = summary["mode"] == "pairwise"
    key = "strength" if pairwise else "mean_score"
    rows = summary["systems"]
    ends = [x for r in rows for x in ([r[key]] if r[key] is not None else []) + (r["ci"] or [])]
    low, high = (min(ends), max(ends)) if ends else (0.0, 1.0)
    human = (summary.get("human") or {}).get("system_means") or {}
    head = (
        "<tr><th>#</th><th>system</th>"
        f"<th>{'strength (log)' if pairwise else 'mean score'}</th><th>95% CI</th><th>interval</th>"
        f"<th>{'comparisons' if pairwise else 'answers'}</th>{'<th>human mean</th>' if human else ''}</tr>"
    )
    body = "".join(_ranking_row(r, key, low, high, human) for r in rows)
    return f"<table>{head}{body}</table>"


def _ranking_row(r: dict[str, Any], key: str, low: float, high: float, human: dict[str, float]) -> str:
    ci = "" if not r["ci"] else f"[{r['ci'][0]:.2f}, {r['ci'][1]:.2f}]"
    human_cell = f"<td class=num>{_n(human.get(r['system']))}</td>" if human else ""
    return (
        f"<tr><td class=num>{r['rank']}</td><th>{_e(r['system'])}</th><td class=num>{_n(r[key])}</td>"
        f"<td class=num>{ci}</td>{_bar(r[key], r['ci'], low, high)}<td class=num>{r['n']}</td>"
        f"{human_cell}</tr>"
    )


def _win_matrix(summary: dict[str, Any]) -> str:
    matrix = summary.get("win_rate")
    if not matrix:
        return ""
    order = [r["system"] for r in summary["systems"]]
    head = "<tr><th></th>" + "".join(f"<th>{_e(s)}</th>" for s in order) + "</tr>"
    body = ""
    for a in order:
        cells = []
        for b in order:
            cell = matrix[a].get(b) if a != b else None
            if cell is None or cell["rate"] is None:
                cells.append("<td></td>")
            else:
                shade = int(255 - 90 * cell["rate"])
                cells.append(
                    f"<td class=num style='background:rgb({shade},{shade},255)'>"
                    f"{cell['rate']:.2f} <span class=muted>({cell['n']})</span></td>"
                )
        body += f"<tr><th>{_e(a)}</th>{''.join(cells)}</tr>"
    return (
        "<h2>Win rate</h2><p class=muted>Row system against column system: its share of points, a tie "
        f"counting half; in brackets the comparisons.</p><table>{head}{body}</table>"
    )


def _facts(summary: dict[str, Any]) -> str:
    counts = summary.get("comparisons") or summary.get("answers") or {}
    parts = [", ".join(f"{_e(k)} {_e(v)}" for k, v in counts.items())]
    if summary["mode"] == "pairwise":
        ties, bias = summary["ties"], summary["position_bias"]
        parts.append(
            f"ties: {ties['n']} ({_n(ties['share'])} of the judged comparisons; {_e(summary['tie_rule'])})"
        )
        parts.append(
            f"position bias: the response shown first won {bias['first_won']} of {bias['orders']} "
            f"presentation orders ({_n(bias['first_share'])})"
        )
    return "".join(f"<p>{p}</p>" for p in parts)


def _languages(summary: dict[str, Any]) -> str:
    per = summary.get("per_language") or {}
    if len(per) < 2:
        return ""
    out = "<h2>Per language</h2>"
    for language, block in per.items():
        if block.get("same_as_overall"):
            continue
        if "systems" in block:
            rows = "".join(
                f"<tr><td class=num>{r['rank']}</td><th>{_e(r['system'])}</th>"
                f"<td class=num>{_n(r['strength'])}</td>"
                f"<td class=num>{r['n']}</td></tr>"
                for r in block["systems"]
            )
            out += f"<h3>{_e(language)} ({block['comparisons']} comparisons)</h3><table>{rows}</table>"
        else:
            rows = "".join(
                f"<tr><th>{_e(s)}</th><td class=num>{_n(v['mean_score'])}</td>"
                f"<td class=num>{v['n']}</td></tr>"
                for s, v in block.items()
            )
            out += f"<h3>{_e(language)}</h3><table>{rows}</table>"
    return out


def _human(summary: dict[str, Any]) -> str:
    human = summary.get("human")
    if not human:
        return "<p class=muted>No human scores: no agreement with the humans' ranking.</p>"
    system, item = human["system_level"], human["item_level"]
    rows = "".join(
        f"<tr><th>systems</th><td>{name} over {system['n_systems']} systems</td>"
        f"<td class=num>{_n(system[name], 3)}</td></tr>"
        for name in ("kendall", "spearman")
    )
    if "agreement" in item:
        rows += (
            f"<tr><th>items</th><td>verdict agrees with the human scores ({item['n']} comparisons)</td>"
            f"<td class=num>{_n(item['agreement'], 3)}</td></tr>"
        )
    else:
        rows += "".join(
            f"<tr><th>items</th><td>{name} over {item['n']} answers</td>"
            f"<td class=num>{_n(item[name], 3)}</td></tr>"
            for name in ("kendall", "spearman")
        )
    return f"<h2>Agreement with the human scores</h2><table>{rows}</table>"


def ranking_page(run_dir: Path) -> str:
    """The page's HTML for the ranking run in `run_dir`."""
    summary = read_ranking(run_dir)
    if summary is None:
        raise CEJudgeError(f"{run_dir} holds no ranking.json; run `cejudge rank --out {run_dir}` first")
    run = summary.get("run", {})
    title = f"{run.get('task', '')} · ranking of {len(summary['systems'])} systems · cejudge view"
    what = (
        "Bradley-Terry log-strengths (mean 0), 95% bootstrap intervals over prompts"
        if summary["mode"] == "pairwise"
        else "mean score per system, 95% bootstrap intervals over prompts"
    )
    return (
        f"<!doctype html><html><head><meta charset=utf-8><title>{_e(title)}</title><style>{_CSS}</style>"
        f"</head><body><h1>{_e(title)}</h1>"
        f"<p>judge {_e(run.get('method'))} · backbone {_e(run.get('lm'))} · schedule "
        f"{_e((run.get('rank') or {}).get('schedule'))}</p>"
        f"<h2>Ranking</h2><p class=muted>{what}.</p>{_ranking_table(summary)}{_facts(summary)}"
        f"{_win_matrix(summary)}{_human(summary)}{_languages(summary)}</body></html>"
    )


def write_ranking_page(run_dir: Path, page: Path) -> None:
    page.parent.mkdir(parents=True, exist_ok=True)
    write_file_atomic(page, ranking_page(run_dir), fsync=False)
