"""bench_roads' table while a cell is still running: no McNemar test yet, a dash, not a crash."""

from __future__ import annotations

from pathlib import Path

from benchmarks.bench_roads import cell_row, table


def test_a_cell_with_no_item_on_one_road_has_no_mcnemar_and_prints(tmp_path: Path) -> None:
    before, after = tmp_path / "before", tmp_path / "after"  # neither road has written a record yet
    row = cell_row([before, after])
    assert "mcnemar" not in row and row["common"] == 0
    lines = table(["before", "after"], {"direct c4": row})
    assert lines[-1].endswith("| - | 0/0 | - |"), lines[-1]
