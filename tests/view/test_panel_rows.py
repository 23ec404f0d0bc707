"""A panel run in the viewer's data (no browser): each row carries the members' votes and the share
agreeing, the CSV keeps them, and each record the page holds keeps its members."""

from __future__ import annotations

import csv
import io

from cejudge_dspy.data import Item
from cejudge_dspy.judges.panel import MemberOutcome, combine
from cejudge_dspy.judges.verdicts import JudgeResult
from cejudge_dspy.runs import Record
from cejudge_dspy.tasks import load_task
from cejudge_dspy.view import csv_text, item_rows


def _record(votes: dict[str, str | None]) -> Record:
    item = Item("i1", "pairwise", "q", response_a="a", response_b="b", label="A")
    outcomes = [
        MemberOutcome(n, "ok", JudgeResult("pairwise", "ok", verdict=v))
        if v is not None
        else MemberOutcome(n, "error", None, error="boom")
        for n, v in votes.items()
    ]
    result = combine("pairwise", outcomes)
    return Record(item.id, "chat", "panel", "ok", item, result, members=[o.to_dict() for o in outcomes])


def test_a_panel_row_has_the_votes_in_member_order_and_the_agreement() -> None:
    (row,) = item_rows([_record({"x": "A", "y": None, "z": "B", "w": "A"})], load_task("chat"))
    assert row["votes"] == "A - B A" and row["panel_outcome"] == "A"
    assert row["agreement"] == 2 / 3 and row["judge"] == "A" and row["outcome"] == "correct"
    (line,) = csv.DictReader(io.StringIO(csv_text([row])))
    assert line["votes"] == "A - B A" and float(line["agreement"]) == 2 / 3


def test_a_single_judge_row_has_no_panel_columns() -> None:
    record = _record({"x": "A", "y": "A"})
    record.members = None
    (row,) = item_rows([record], load_task("chat"))
    assert "votes" not in row and "agreement" not in row
