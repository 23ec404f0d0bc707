"""The viewer and selective judging: the threshold a run's summary recorded shows its items as
`abstained` (table, filters, CSV, header), `--abstain-below` re-thresholds, and the risk-coverage chart."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.view import csv_text, item_rows, load_view_run
from cejudge_dspy.view._page import page_data
from cejudge_dspy.view._run import overview
from tests.metrics.test_selective import known
from tests.support.view_runs import write_run


def run_with_threshold(tmp_path: Path, threshold: float | None) -> Path:
    run = write_run(tmp_path / "known", {"task": "chat", "method": "direct", "lm": "fake"}, known())
    if threshold is not None:  # what `cejudge evaluate --abstain-below` leaves in summary.json
        summary = {"selective": {"confidence": "margin", "abstain_below": threshold}}
        (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return run


def test_the_recorded_threshold_shows_items_as_abstained(tmp_path: Path) -> None:
    run = load_view_run(run_with_threshold(tmp_path, 0.15), n_resamples=0)
    assert run.abstained == {"k4", "k5"}
    rows = {r["id"]: r["outcome"] for r in item_rows(run.records, run.spec, run.name, run.abstained)}
    assert rows == {"k1": "correct", "k2": "wrong", "k3": "correct", "k4": "abstained", "k5": "abstained"}
    head = overview(run)
    assert head["n_abstained"] == 2 and head["abstain_below"] == 0.15
    assert run.summary["overall"]["counts"]["abstained"] == 2
    text = csv_text(item_rows(run.records, run.spec, run.name, run.abstained))
    assert sorted(r["outcome"] for r in csv.DictReader(io.StringIO(text))).count("abstained") == 2
    data = page_data([run], n_resamples=0)
    assert data["runs"][0]["filters"]["outcomes"]["abstained"] == 2
    chart = data["runs"][0]["charts"]["selective"]
    assert chart.lstrip().startswith("<svg") and "AURC 0.297" in chart
    # Overridden on the command line; without a recorded threshold nothing is abstained.
    assert load_view_run(run.path, n_resamples=0, abstain_below=0.35).abstained == {"k2", "k3", "k4", "k5"}
    bare = load_view_run(run_with_threshold(tmp_path / "b", None), n_resamples=0)
    assert bare.abstained == frozenset() and overview(bare)["n_abstained"] is None
    assert "selective" in page_data([bare], n_resamples=0)["runs"][0]["charts"]  # the curve is drawn anyway


def test_view_refuses_a_threshold_out_of_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = run_with_threshold(tmp_path, None)
    assert main(["view", str(run), "--abstain-below", "-1", "-o", str(tmp_path / "v.html")]) == 2
    assert "--abstain-below: must be at least 0" in capsys.readouterr().err
    assert not (tmp_path / "v.html").exists()
