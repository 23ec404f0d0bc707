"""The table `cejudge consistency` prints: a row per language and one for any language, each judge's rate
with its CI, and the paired test with the items only one judge kept."""

from __future__ import annotations

from rich.console import Console

from cejudge_dspy.cli.display import consistency_table


def _m(value: float | None, n: int = 10, **extra: float) -> dict:
    return {"value": value, "n": n, "ci_low": 0.1 if value is not None else None, "ci_high": 0.5, **extra}


def test_rows_rates_and_the_paired_test() -> None:
    paired = {"cejudge vs direct": {"p_value": 0.125, "extra": {"b": 4, "c": 0}}}
    summary = {
        "task": "chat",
        "mode": "pairwise",
        "methods": ["cejudge", "direct"],
        "by_language": {
            "ko": {"cejudge": {"flip_rate": _m(0.0)}, "direct": {"flip_rate": _m(0.4)}, "paired": paired},
            "ja": {"cejudge": {"flip_rate": _m(None, 0)}, "direct": {"flip_rate": _m(0.2)}, "paired": {}},
        },
        "any_language": {
            "cejudge": {"changed_rate": _m(0.1)},
            "direct": {"changed_rate": _m(0.5)},
            "paired": paired,
        },
    }
    console = Console(width=200, record=True)
    console.print(consistency_table(summary))
    text = console.export_text()
    assert "40.0% [10.0–50.0] n=10" in text and "p=0.125 (4/0)" in text
    assert "n/a n=0" in text  # ja: no item had a verdict on both sides
    assert [line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│")] == [
        "ko",
        "ja",
        "any language",
    ]


def test_the_view_shows_the_same_cells() -> None:
    """One definition of the cells (consistency.language_table): `cejudge view`'s page agrees with the
    printed table."""
    from cejudge_dspy.view._consistency import _language_table

    paired = {"cejudge vs direct": {"p_value": 0.125, "extra": {"b": 4, "c": 0}}}
    summary = {
        "mode": "pointwise",
        "methods": ["cejudge", "direct"],
        "by_language": {
            "ko": {m: {"mean_abs_change": _m(0.25), "kendall": _m(None, 3)} for m in ("cejudge", "direct")}
            | {"paired": paired},
        },
        "any_language": {
            "cejudge": {"changed_rate": _m(0.1)},
            "direct": {"changed_rate": _m(0.5)},
            "paired": {},
        },
    }
    page = _language_table(summary)
    assert "<th>cejudge |Δscore| · tau</th>" in page and "<th>McNemar cejudge vs direct</th>" in page
    assert "0.250 [0.100–0.500] n=10 · n/a n=3" in page and "p=0.125 (4/0)" in page
    assert "<th>any language</th><td class=num>10.0% [10.0–50.0] n=10</td>" in page
