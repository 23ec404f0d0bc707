"""benchmarks/bench_methods.py on the simulated backbone: `--first` and `--concurrency` reach the runs, and
the table's wall seconds per item are the run's own wall clock over its items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import bench_methods


def test_first_and_concurrency_reach_the_runs_and_the_wall_clock_is_per_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs"
    argv = ["--lm", "simulated:0", "--sets", "obvious", "--methods", "direct", "--first", "4"]
    argv += ["--concurrency", "2", "--out", str(out), "--bootstrap", "20", "--json", str(tmp_path / "f.json")]
    assert bench_methods.main(argv) == 0
    run = out / "obvious" / "direct"
    assert json.loads((run / "run.json").read_text(encoding="utf-8"))["first"] == 4
    records = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(records) == 4
    wall = json.loads((run / "summary.json").read_text(encoding="utf-8"))["timing"]["wall_seconds"]
    figures = json.loads((tmp_path / "f.json").read_text(encoding="utf-8"))
    row = figures["sets"]["obvious"]["methods"]["direct"]
    assert row["items"] == 4 and row["wall_per_item"] == pytest.approx(wall / 4)
    assert "| wall s/item |" in capsys.readouterr().out
    # A rerun resumes: nothing is judged again, the same four records.
    assert bench_methods.main(argv) == 0
    assert (run / "results.jsonl").read_text(encoding="utf-8").splitlines() == records


def test_bad_first_and_concurrency_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    for flag in ("--first", "--concurrency"):
        with pytest.raises(SystemExit):
            bench_methods.parse_args([flag, "0"])
        assert f"{flag}: must be at least 1" in capsys.readouterr().err
