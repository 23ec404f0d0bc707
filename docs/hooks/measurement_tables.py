"""MkDocs hook: a measurement page's tables come from its benchmark's data file, newest entry first.

A page holds the marker `<!-- measurements: BENCH -->` (optionally `<!-- measurements: BENCH level=3 -->`
for the entries' heading level, 2 by default); `on_page_markdown` replaces it with one section per entry of
docs/measurements/data/BENCH.json, newest first: its date as the heading, the command, the commit, the host
and versions, the entry's note, and its tables. `<!-- measurements: BENCH id=ID -->` renders the one entry
with that `id`, without a heading, inside a section of the page's own prose (an old run and its reading);
the page's list markers then leave it out. The benchmarks append those entries (`--record`,
benchmarks/record.py, which documents the format), so a page's tables are the measured data, never a
hand copy. tests/docs/test_measurement_tables.py checks a recorded entry renders here.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any

# On a line of its own, so a page can name the marker in code (contributing-docs.md does).
MARKER = re.compile(r"^<!-- measurements: ([\w.-]+)((?: \w+=\S+)*) -->$", re.M)
DATA = "measurements/data"


def _cell(value: Any, template: str) -> str:
    """A number through its column's template (`{:.3f}`), a list of numbers through one with as many
    fields (`[{:.3f}, {:.3f}]` for a CI); a list holding a null, or a null, is an empty cell."""
    if value is None or isinstance(value, list) and None in value:
        return ""
    if template and isinstance(value, list):
        value = template.format(*value)
    elif template and _is_number(value):
        value = template.format(value)
    return " ".join(str(value).split()).replace("|", "\\|")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def table(t: dict[str, Any]) -> str:
    """One table as markdown: numeric columns (or those `align` marks "r") right-aligned."""
    columns, rows = t["columns"], t["rows"]
    formats = t.get("formats") or [""] * len(columns)
    align = t.get("align") or "".join(
        "r"
        if any(_is_number(r[i]) for r in rows) and all(r[i] is None or _is_number(r[i]) for r in rows)
        else "l"
        for i in range(len(columns))
    )
    out = ["| " + " | ".join(_cell(c, "") for c in columns) + " |"]
    out.append("|" + "|".join("---:" if a == "r" else "---" for a in align) + "|")
    out += ["| " + " | ".join(_cell(v, f) for v, f in zip(row, formats, strict=True)) + " |" for row in rows]
    return "\n".join(out)


def when(date: str) -> str:
    """`2026-12-04T20:01:33Z` -> `2026-12-04 20:01 UTC`; a date alone stays as it is."""
    if "T" not in date:
        return date
    return datetime.strptime(date, "%Y-%m-%dT%H:%M:%SZ").strftime("%Y-%m-%d %H:%M UTC")


def _host(entry: dict[str, Any]) -> str:
    h = entry.get("host") or {}
    if h.get("description"):
        text = h["description"]
    else:
        load = h.get("load_average")
        parts = [h.get("cpu"), f"{h['cores']} cores" if h.get("cores") else None]
        parts.append(f"load average {' / '.join(f'{x:.1f}' for x in load)}" if load else None)
        text = ", ".join(p for p in [*parts, h.get("platform")] if p)
    names = {"python": "Python", "dspy": "DSPy", "llama_cpp": "llama-cpp-python", "xllamacpp": "xllamacpp"}
    shown = [f"{names.get(k, k)} {v}" for k, v in (entry.get("versions") or {}).items() if v]
    return "; ".join(p for p in (text, ", ".join(shown)) if p)


def render_entry(entry: dict[str, Any], level: int = 2) -> str:
    """One entry: heading (date and title; none at level 0), the facts, the note, the tables."""
    heading = when(entry["date"]) + (f": {entry['title']}" if entry.get("title") else "")
    out = [f"{'#' * level} {heading}\n"] if level else []
    commands = entry.get("command")
    commands = commands if isinstance(commands, list) else [commands] if commands else []
    facts = []
    if len(commands) == 1:
        facts.append(f"Command: `{commands[0]}`")
    if entry.get("commit"):
        facts.append(f"commit `{entry['commit']}`")
    if _host(entry):
        facts.append(f"host: {_host(entry)}")
    if facts:
        out.append(" · ".join(facts) + ".\n")
    if len(commands) > 1:
        out.append("Commands, in order:\n")
        out += [f"- `{c}`" for c in commands]
        out.append("")
    if entry.get("source"):
        out.append(f"*{entry['source']}*\n")
    if entry.get("note"):
        out.append(entry["note"].strip() + "\n")
    for t in entry.get("tables", []):
        if t.get("title"):
            out.append(f"{t['title']}\n")
        out.append(table(t) + "\n")
    return "\n".join(out)


def render(data: dict[str, Any], level: int = 2, shown_elsewhere: frozenset[str] = frozenset()) -> str:
    """Every entry but those shown by their id elsewhere on the page, newest first (ISO dates sort as
    text)."""
    entries = [e for e in data.get("entries", []) if e.get("id") not in shown_elsewhere]
    entries.sort(key=lambda e: e["date"], reverse=True)
    if not entries:
        bench = data["benchmark"]
        return f"*Nothing recorded yet: `python -m benchmarks.{bench} --record` adds the first entry.*\n"
    return "\n".join(render_entry(e, level) for e in entries)


def include(markdown: str, docs_dir: Path, page_uri: str) -> str:
    """`markdown` with every marker replaced by its benchmark's entries and a link to the data file."""
    claimed = {
        (m.group(1), o[3:]) for m in MARKER.finditer(markdown) for o in m.group(2).split() if o[:3] == "id="
    }

    def replace(match: re.Match[str]) -> str:
        bench, options = match.group(1), dict(o.split("=", 1) for o in match.group(2).split())
        path = docs_dir / DATA / f"{bench}.json"
        if not path.is_file():
            raise ValueError(f"{page_uri}: no measurements for {bench!r} ({path} is missing)")
        data = json.loads(path.read_text(encoding="utf-8"))
        link = os.path.relpath(f"{DATA}/{bench}.json", os.path.dirname(page_uri) or ".")
        if "id" in options:
            found = [e for e in data.get("entries", []) if e.get("id") == options["id"]]
            if len(found) != 1:
                raise ValueError(
                    f"{page_uri}: {len(found)} entries of {bench!r} have the id {options['id']!r}"
                )
            return f"{render_entry(found[0], 0)}\nData: [{bench}.json]({link}), id `{options['id']}`.\n"
        mine = frozenset(i for b, i in claimed if b == bench)
        body = render(data, int(options.get("level", 2)), mine)
        return f"{body}\nThe entries above are [{bench}.json]({link}), newest first.\n"

    return MARKER.sub(replace, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return include(markdown, Path(config["docs_dir"]), page.file.src_uri)
