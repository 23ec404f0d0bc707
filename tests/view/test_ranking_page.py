"""The page of a ranking run: the systems in rank order with their intervals drawn on one axis, the win-rate
matrix, and the agreement with human scores; a directory without ranking.json is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.view import ranking_page

RANKING = {
    "mode": "pairwise",
    "systems": [
        {"system": "big <b>", "strength": 0.5, "ci": [0.1, 0.9], "n": 4, "rank": 1},
        {"system": "small", "strength": -0.5, "ci": [-0.9, -0.1], "n": 4, "rank": 2},
    ],
    "comparisons": {"scheduled": 4, "judged": 4, "ok": 4},
    "win_rate": {"big <b>": {"small": {"rate": 0.75, "n": 4}}, "small": {"big <b>": {"rate": 0.25, "n": 4}}},
    "ties": {"n": 1, "share": 0.25, "per_system": {"big <b>": 1, "small": 1}},
    "position_bias": {"orders": 2, "first_won": 2, "first_share": 1.0},
    "per_language": {"en": {"comparisons": 4, "same_as_overall": True}},
    "tie_rule": "a tie counts as half a win for each system",
    "human": {
        "system_means": {"big <b>": 4.0, "small": 2.0},
        "system_level": {"n_systems": 2, "kendall": None, "spearman": None},
        "item_level": {"agreement": 0.75, "n": 4, "human_ties": 0},
    },
    "run": {"task": "chat", "method": "cejudge", "lm": "simulated:0", "rank": {"schedule": "all-pairs"}},
}


def test_page_shows_ranking_intervals_and_matrix(tmp_path: Path) -> None:
    (tmp_path / "ranking.json").write_text(json.dumps(RANKING), encoding="utf-8")
    page = ranking_page(tmp_path)
    assert page.index("big &lt;b&gt;") < page.index("small")  # rank order, names escaped
    assert "[0.10, 0.90]" in page and "[-0.90, -0.10]" in page
    # Each interval is drawn on the axis spanning every value and interval: [-0.9, 0.9].
    assert "left:55.6%;width:44.4%" in page
    assert "0.75 <span class=muted>(4)</span>" in page and "0.25 <span class=muted>(4)</span>" in page
    assert "won 2 of 2" in page and "verdict agrees with the human scores" in page
    assert "<script" not in page


def test_a_directory_without_a_ranking_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(CEJudgeError, match="no ranking.json"):
        ranking_page(tmp_path)
