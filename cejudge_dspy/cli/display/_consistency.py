"""The table `cejudge consistency` prints: per language and judge, how often the output changed against
the original (with its 95% CI), and the paired test of the first judge against each other."""

from __future__ import annotations

from typing import Any

from rich.table import Table


def _value(m: dict[str, Any] | None, percent: bool = True) -> str:
    """`43.3% [31.6–56.7] n=60` (pointwise: `0.500 [0.250–0.750] n=60`)."""
    if not m or m.get("value") is None:
        return f"n/a n={m.get('n', 0)}" if m else "n/a"
    scale, unit, digits = (100, "%", 1) if percent else (1, "", 3)
    text = f"{scale * m['value']:.{digits}f}{unit}"
    if m.get("ci_low") is not None and m.get("ci_high") is not None:
        text += f" [{scale * m['ci_low']:.{digits}f}–{scale * m['ci_high']:.{digits}f}]"
    return f"{text} n={m.get('n', 0)}"


def _p(m: dict[str, Any] | None) -> str:
    """`p=0.572 (16/12)`: the items only the first judge kept / only the other kept."""
    if not m or m.get("p_value") is None:
        return "n/a"
    return f"p={m['p_value']:.3g} ({m['extra'].get('b', 0)}/{m['extra'].get('c', 0)})"


def consistency_table(summary: dict[str, Any]) -> Table:
    """Rows: each language, then "any language" (an item counts as changed when any rendering changed
    it). Pairwise shows the flip rate; pointwise the mean absolute score change and Kendall's tau."""
    methods: list[str] = summary["methods"]
    pairwise = summary["mode"] == "pairwise"
    table = Table(title=f"{summary['task']} · consistency across languages ({', '.join(methods)})")
    table.add_column("language")
    for method in methods:
        table.add_column(f"{method} flip rate" if pairwise else f"{method} |Δscore| · tau", justify="right")
    paired = [f"{methods[0]} vs {m}" for m in methods[1:]]
    for name in paired:
        table.add_column(f"McNemar {name}", justify="right")
    for lang, entry in summary["by_language"].items():
        cells = []
        for method in methods:
            m = entry[method]
            cells.append(
                _value(m["flip_rate"])
                if pairwise
                else f"{_value(m['mean_abs_change'], False)} · {_value(m['kendall'], False)}"
            )
        table.add_row(lang, *cells, *(_p(entry["paired"].get(name)) for name in paired))
    anyl = summary["any_language"]
    table.add_row(
        "[bold]any language[/]",
        *(_value(anyl[m]["changed_rate"]) for m in methods),
        *(_p(anyl["paired"].get(name)) for name in paired),
    )
    what = (
        "flip rate: share of items whose verdict on the rendering differs from the original's"
        if pairwise
        else "|Δscore|: mean absolute change of the score on the rendering; tau: Kendall's tau between the "
        "scores on the original and on the rendering"
    )
    table.caption = (
        f"{what}; any language: share of items changed by at least one rendering; 95% bootstrap CIs in "
        "brackets; McNemar: exact test on kept/changed per item, with the items only the first judge kept / "
        "only the other kept"
    )
    return table
