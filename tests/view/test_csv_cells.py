"""`cejudge view --csv` never hands a spreadsheet a formula (issue #41, OWASP CSV injection).

An item's id, language or error text comes from the data file, so from anyone; a cell starting with
`=`, `+`, `-`, `@`, a tab or a carriage return is a formula to Excel, LibreOffice and Google Sheets. Such
text gets a leading `'`; numbers, negative ones included, are written as they are.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.view import csv_text
from tests.support import view_runs

FORMULAS = ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1:A2)", "\t=1", "\r=1"]


def cells(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize("value", FORMULAS)
def test_formula_like_text_gets_a_leading_quote(value: str) -> None:
    row = cells(csv_text([{"id": value, "language": value, "judge": "A"}]))[0]
    expected = "'" + value.replace("\r", "\n")  # a carriage return is written as a (quoted) line break
    assert row["id"] == expected and row["language"] == expected and row["judge"] == "A"


@pytest.mark.parametrize("value", [-0.5, 0.25, -3, 0, "-0.5", "+2", "1e-3", "plain text", "a=b", ""])
def test_numbers_and_plain_text_are_left_as_they_are(value: object) -> None:
    row = cells(csv_text([{"id": "i1", "judge": value, "seconds": value}]))[0]
    assert row["judge"] == row["seconds"] == str(value)


def test_the_cli_csv_of_a_run_with_a_hostile_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = {"=cmd|' /C calc'!A0": view_runs.CHAT_A[next(iter(view_runs.CHAT_A))], **view_runs.CHAT_A}
    run = view_runs.chat_run(tmp_path, "hostile", spec)
    out = tmp_path / "items.csv"
    assert main(["view", str(run), "--bootstrap", "0", "--csv", str(out)]) == 0
    rows = cells(out.read_text(encoding="utf-8"))
    assert rows[0]["id"] == "'=cmd|' /C calc'!A0"
    assert not any(v.startswith(("=", "+", "@", "\t", "\r")) for r in rows for v in r.values())
