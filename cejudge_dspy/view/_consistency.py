"""The page of a consistency run (`cejudge view` on a directory `cejudge consistency` wrote): how often each
judge changed its output per language, accuracy per rendering, the flip matrix (items by language and
judge, a changed output marked) and every item's renderings side by side.

Static HTML with its stylesheet inlined: it opens from disk, with no script and no network. Each child run
is an ordinary run directory, and `cejudge view <dir>/<rendering>-<method>` shows its items in full.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from cejudge_dspy.consistency import (
    ORIGINAL_RUN,
    RENDERINGS,
    child_name,
    language_table,
    metric_cell,
    read_renderings,
    summarize_consistency,
)
from cejudge_dspy.files import make_dirs, write_file_atomic
from cejudge_dspy.runs import read_run

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;vertical-align:top;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.flip{background:#fbd5d5;font-weight:600}
td.same{background:#e3f4e3}
td.none{color:#999}
.texts td{max-width:28rem;white-space:pre-wrap}
.muted{color:#666}
details{margin:.3rem 0}
summary{cursor:pointer}
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _language_table(summary: dict[str, Any]) -> str:
    header, rows = language_table(summary)
    head = "".join(f"<th>{_e(name)}</th>" for name in header)
    body = "".join(
        f"<tr><th>{_e(label)}</th>{''.join(f'<td class=num>{_e(c)}</td>' for c in cells)}</tr>"
        for label, cells in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _accuracy_table(summary: dict[str, Any]) -> str:
    accuracy = summary.get("accuracy")
    if not accuracy:
        return "<p class=muted>No human labels: no accuracy per rendering.</p>"
    methods = summary["methods"]
    percent = summary["mode"] == "pairwise"
    head = "".join(f"<th>{_e(m)}</th>" for m in methods)
    rows = [
        f"<tr><th>{_e(r)}</th>"
        + "".join(f"<td class=num>{_e(metric_cell(by[m], percent))}</td>" for m in methods)
        + "</tr>"
        for r, by in accuracy.items()
    ]
    return f"<table><tr><th>rendering</th>{head}</tr>{''.join(rows)}</table>"


def _flip_matrix(summary: dict[str, Any], ids: list[str]) -> str:
    methods, languages, outputs = summary["methods"], summary["languages"], summary["outputs"]
    head = "".join(f"<th>{_e(m)}<br>{_e(r)}</th>" for m in methods for r in [ORIGINAL_RUN, *languages])
    rows = []
    for i in ids:
        cells = []
        for m in methods:
            original = outputs[m][ORIGINAL_RUN].get(i)
            for r in [ORIGINAL_RUN, *languages]:
                value = outputs[m][r].get(i)
                if value is None:
                    css = "none"
                elif r == ORIGINAL_RUN or original is None:
                    css = ""
                else:
                    css = "flip" if value != original else "same"
                cells.append(f"<td class='num {css}'>{_e('—' if value is None else value)}</td>")
        rows.append(f"<tr><th><a href='#item-{_e(i)}'>{_e(i)}</a></th>{''.join(cells)}</tr>")
    return f"<table><tr><th>item</th>{head}</tr>{''.join(rows)}</table>"


def _renderings(out: Path, summary: dict[str, Any], ids: list[str]) -> str:
    languages = summary["languages"]
    made = read_renderings(out / RENDERINGS)
    original_run = out / child_name(ORIGINAL_RUN, summary["methods"][0])
    items = (
        {r.id: r.item for r in read_run(original_run).records}
        if (original_run / "results.jsonl").exists()
        else {}
    )
    fields = (
        ("instruction", "response_a", "response_b")
        if summary["mode"] == "pairwise"
        else ("instruction", "response")
    )
    blocks = []
    for i in ids:
        item = items.get(i)
        head = f"<th>original ({_e(item.language if item else '?')})</th>"
        for lang in languages:
            source = made[(i, lang)].source if (i, lang) in made else "not rendered"
            head += f"<th>{_e(lang)} <span class=muted>({_e(source)})</span></th>"
        rows = []
        for name in fields:
            cells = [f"<td>{_e(getattr(item, name) if item else '')}</td>"]
            for lang in languages:
                r = made.get((i, lang))
                text = r.texts.get(name) if r is not None and r.status == "ok" else (r.error if r else "")
                cells.append(f"<td>{_e(text)}</td>")
            rows.append(f"<tr><th>{name}</th>{''.join(cells)}</tr>")
        changed = summary["changed"].get(i, {})
        note = "; ".join(f"{m}: {', '.join(langs) or 'none'}" for m, langs in changed.items())
        blocks.append(
            f"<details id='item-{_e(i)}'><summary>{_e(i)} <span class=muted>changed by: {_e(note)}</span>"
            f"</summary><table class=texts><tr><th></th>{head}</tr>{''.join(rows)}</table></details>"
        )
    return "".join(blocks)


def consistency_page(out: Path, *, n_resamples: int = 1000) -> str:
    """The page's HTML for the consistency run in `out`."""
    summary = summarize_consistency(out, n_resamples=n_resamples)
    run = summary["run"]
    ids = list(run.get("items", {}).get("ids", []))
    children = ", ".join(
        child_name(r, m) for r in [ORIGINAL_RUN, *summary["languages"]] for m in summary["methods"]
    )
    title = f"{summary['task']} · consistency across {', '.join(summary['languages'])} · cejudge view"
    return (
        f"<!doctype html><html><head><meta charset=utf-8><title>{_e(title)}</title><style>{_CSS}</style>"
        f"</head><body><h1>{_e(title)}</h1>"
        f"<p>{len(ids)} items · judges {_e(', '.join(summary['methods']))}"
        f" · translator {_e(run.get('translator'))} · backbone {_e(run.get('lm'))}</p>"
        "<h2>How often the output changed</h2>"
        f"{_language_table(summary)}"
        "<p class=muted>Flip rate: items whose verdict on the rendering differs from the original's "
        "(pointwise: mean absolute score change and Kendall's tau between the two score lists), 95% "
        "bootstrap CIs. McNemar: exact test on kept/changed per item; in brackets the items only the first "
        "judge kept / only the other kept.</p>"
        "<h2>Accuracy against the human label, per rendering</h2>"
        f"{_accuracy_table(summary)}"
        "<h2>Flip matrix</h2><p class=muted>Red: the output on the rendering differs from the original's; "
        "green: the same; —: no output.</p>"
        f"{_flip_matrix(summary, ids)}"
        "<h2>Renderings side by side</h2>"
        f"{_renderings(out, summary, ids)}"
        f"<p class=muted>Child runs (each viewable with <code>cejudge view</code>): {_e(children)}</p>"
        "</body></html>"
    )


def write_consistency_page(run_dir: Path, page: Path, *, n_resamples: int = 1000) -> None:
    make_dirs(page.parent)  # a read-only disk or a file in the way: one line
    write_file_atomic(page, consistency_page(run_dir, n_resamples=n_resamples), fsync=False)
