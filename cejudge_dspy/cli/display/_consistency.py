"""The table `cejudge consistency` prints: per language and judge, how often the output changed against
the original (with its 95% CI), and the paired test of the first judge against each other. Its cells are
consistency.language_table's, which `cejudge view`'s page shows too."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text


def consistency_table(summary: dict[str, Any]) -> Table:
    """Rows: each language, then "any language" (an item counts as changed when any rendering changed
    it). Pairwise shows the flip rate; pointwise the mean absolute score change and Kendall's tau."""
    from cejudge_dspy.consistency import ANY_LANGUAGE, language_table  # imports DSPy: not at `--help`

    methods: list[str] = summary["methods"]
    pairwise = summary["mode"] == "pairwise"
    header, rows = language_table(summary)
    table = Table(title=f"{summary['task']} · consistency across languages ({', '.join(methods)})")
    table.add_column(header[0])
    for name in header[1:]:
        table.add_column(name, justify="right")
    for label, cells in rows:
        table.add_row(Text(label, style="bold") if label == ANY_LANGUAGE else label, *cells)
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
