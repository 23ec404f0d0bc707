"""The consistency table as text, one definition for the table `cejudge consistency` prints (cli.display,
with rich) and the page `cejudge view` writes (view, in HTML): a column a judge, then McNemar's test of
the first judge against each other; a row a language, then any language."""

from __future__ import annotations

from typing import Any, NamedTuple

ANY_LANGUAGE = "any language"


def metric_cell(m: dict[str, Any] | None, percent: bool = True) -> str:
    """`43.3% [31.6–56.7] n=60` (not a share: `0.500 [0.250–0.750] n=60`; no value: `n/a n=0`)."""
    if not m or m.get("value") is None:
        return f"n/a n={m.get('n', 0)}" if m else "n/a"
    scale, unit, digits = (100, "%", 1) if percent else (1, "", 3)
    text = f"{scale * m['value']:.{digits}f}{unit}"
    if m.get("ci_low") is not None and m.get("ci_high") is not None:
        text += f" [{scale * m['ci_low']:.{digits}f}–{scale * m['ci_high']:.{digits}f}]"
    return f"{text} n={m.get('n', 0)}"


def paired_cell(m: dict[str, Any] | None) -> str:
    """`p=0.572 (16/12)`: McNemar's p, then the items only the first judge kept / only the other kept."""
    if not m or m.get("p_value") is None:
        return "n/a"
    extra = m.get("extra") or {}
    return f"p={m['p_value']:.3g} ({extra.get('b', 0)}/{extra.get('c', 0)})"


class LanguageTable(NamedTuple):
    """The header (`language`, then a column a judge and a paired test) and the rows, each its label and
    cells; the last row is `ANY_LANGUAGE`."""

    header: list[str]
    rows: list[tuple[str, list[str]]]


def language_table(summary: dict[str, Any]) -> LanguageTable:
    """Pairwise: each judge's flip rate; pointwise: the mean absolute score change and Kendall's tau. The
    any-language row: the share of items changed by at least one rendering."""
    methods: list[str] = summary["methods"]
    pairwise = summary["mode"] == "pairwise"
    paired = [f"{methods[0]} vs {m}" for m in methods[1:]]
    header = ["language"]
    header += [f"{m} flip rate" if pairwise else f"{m} |Δscore| · tau" for m in methods]
    header += [f"McNemar {name}" for name in paired]

    def judged(m: dict[str, Any]) -> str:
        if pairwise:
            return metric_cell(m["flip_rate"])
        return f"{metric_cell(m['mean_abs_change'], False)} · {metric_cell(m['kendall'], False)}"

    rows = [
        (
            lang,
            [judged(entry[m]) for m in methods] + [paired_cell(entry["paired"].get(name)) for name in paired],
        )
        for lang, entry in summary["by_language"].items()
    ]
    anyl = summary["any_language"]
    rows.append(
        (
            ANY_LANGUAGE,
            [metric_cell(anyl[m]["changed_rate"]) for m in methods]
            + [paired_cell(anyl["paired"].get(name)) for name in paired],
        )
    )
    return LanguageTable(header, rows)
