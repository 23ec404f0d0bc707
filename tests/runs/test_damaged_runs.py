"""Damaged runs whose right outcome is a result, not a refusal (issue #41): a torn last line is reported
and counted as missing, an exact copy of a line is dropped with a warning, a retried item's last record
counts, and the runner's own reader keeps resuming over a torn tail. The refusals (a `{}` line, a
conflicting duplicate, a foreign id, ...) are the hostile corpus in tests/support/hostile/readers.py."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.metrics import load_run, summarize
from cejudge_dspy.runs import RESULTS, RUN, read_records, read_run
from cejudge_dspy.runs._files import repair_torn_tail, torn_tail
from cejudge_dspy.tasks import load_task
from tests.support.bad_inputs import evaluate, good_data

N = 10


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished chat run of N items, judged once for the module."""
    root = tmp_path_factory.mktemp("judged")
    argv = evaluate(data=good_data(root, N))(root)
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        assert main(argv) == 0
    return root / "run"


@pytest.fixture
def run(judged: Path, tmp_path: Path) -> Path:
    """A private copy of the judged run, to damage."""
    return Path(shutil.copytree(judged, tmp_path / "copy"))


def lines(run: Path) -> list[str]:
    return (run / RESULTS).read_text(encoding="utf-8").splitlines()


def tear(run: Path) -> None:
    """Cut the last line off mid-record, as a kill mid-write from before the atomic appends did."""
    data = (run / RESULTS).read_bytes()
    (run / RESULTS).write_bytes(data[:-25])


def test_run_json_lists_the_items_it_judges(run: Path) -> None:
    items = json.loads((run / RUN).read_text())["items"]
    assert items["n"] == N and sorted(items["ids"]) == sorted(json.loads(line)["id"] for line in lines(run))


def test_a_torn_last_line_is_reported_and_its_item_counted_missing(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tear(run)
    read = read_run(run)
    err = capsys.readouterr().err
    assert f"1 torn line at the end of {run / RESULTS}" in err and "cejudge evaluate" in err
    assert (len(read.records), read.torn, read.n_missing) == (N - 1, 1, 1)
    ids = json.loads((run / RUN).read_text())["items"]["ids"]
    assert (
        read.missing == [i for i in ids if i not in {r.id for r in read.records}] and len(read.missing) == 1
    )
    assert len(lines(run)) == N  # a reader reports the torn line; only a resume moves it aside


def test_view_of_a_torn_run_shows_the_missing_item(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cejudge_dspy.view import load_view_run
    from cejudge_dspy.view._run import overview

    tear(run)
    shown = load_view_run(run, n_resamples=0)
    assert "torn line" in capsys.readouterr().err
    assert shown.summary["n_items"] == N - 1 and shown.summary["n_missing"] == 1
    assert overview(shown)["n_missing"] == 1
    assert main(["view", str(run), "--bootstrap", "0"]) == 0
    page = (run / "view.html").read_text(encoding="utf-8")
    assert '"n_missing": 1' in page or '"n_missing":1' in page


def test_a_whole_run_reports_nothing_missing(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    read = read_run(run)
    assert (len(read.records), read.torn, read.n_missing, read.missing) == (N, 0, 0, [])
    assert capsys.readouterr().err == ""


def test_compare_and_calibrate_of_a_torn_run_warn_and_use_the_whole_lines(
    run: Path, judged: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tear(run)
    assert main(["compare", str(judged), str(run), "--bootstrap", "0"]) == 0
    captured = capsys.readouterr()
    assert "torn line" in captured.err and "only in A 1" in captured.out.replace("\n", " ")


def test_an_exact_copy_of_a_line_is_dropped_with_a_warning(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = load_task("chat")
    before = summarize(load_run(run)[1], spec, n_resamples=0)
    (run / RESULTS).write_text("\n".join([*lines(run), lines(run)[3]]) + "\n", encoding="utf-8")
    config, records = load_run(run)
    assert f"{run / RESULTS}:{N + 1}:" in capsys.readouterr().err
    assert len(records) == N and summarize(records, spec, n_resamples=0) == before


def test_a_retried_item_counts_with_its_last_record(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An errored item is judged again on resume and appended: the readers take the retry, silently."""
    rows = [json.loads(line) for line in lines(run)]
    errored = {**rows[0], "status": "error", "result": None, "error": "engine exploded"}
    (run / RESULTS).write_text(
        "".join(json.dumps(r) + "\n" for r in [errored, *rows[1:], rows[0]]), encoding="utf-8"
    )
    records = {r.id: r for r in read_run(run).records}
    assert records[rows[0]["id"]].status == rows[0]["status"] and len(records) == N
    assert capsys.readouterr().err == ""


def test_a_retry_of_another_item_under_the_same_id_is_refused(run: Path) -> None:
    rows = [json.loads(line) for line in lines(run)]
    errored = {**rows[0], "status": "error", "result": None, "error": "x"}
    other = {**rows[0], "item": {**rows[0]["item"], "instruction": "another question"}}
    (run / RESULTS).write_text("".join(json.dumps(r) + "\n" for r in [errored, *rows[1:], other]))
    with pytest.raises(CEJudgeError, match=rf"{RESULTS}:{N + 1}: item '{rows[0]['id']}' is recorded again"):
        read_run(run)


def test_a_run_json_without_items_reads_without_the_id_checks(run: Path) -> None:
    """A run from before `items`: no foreign-id check (its data is unknown), a torn line still counts."""
    config = json.loads((run / RUN).read_text())
    del config["items"]
    (run / RUN).write_text(json.dumps(config))
    extra = {**json.loads(lines(run)[0]), "id": "foreign"}
    (run / RESULTS).write_text("\n".join([*lines(run), json.dumps(extra)]) + "\n")
    tear(run)  # cuts the foreign line
    read = read_run(run)
    assert (read.expected, len(read.records), read.n_missing) == (None, N, 1)


def test_the_runner_reader_and_the_repair_agree_on_what_is_torn(run: Path) -> None:
    """One rule: the final line that is not a JSON object, with or without its newline. The runner's
    reader skips it, the readers report it, and a resume moves it aside and judges its item again."""
    whole = lines(run)
    for tail in ('{"id": "x", "ta', '{"id": "x", "ta\n', "[1]\n"):
        (run / RESULTS).write_text("\n".join(whole) + "\n" + tail, encoding="utf-8")
        data = (run / RESULTS).read_bytes()
        assert torn_tail(data) == len(("\n".join(whole) + "\n").encode())
        assert len(read_records(run / RESULTS)) == N and read_run(run).torn == 1
        assert repair_torn_tail(run / RESULTS)
        assert len(read_records(run / RESULTS)) == N and read_run(run).torn == 0
    (run / RESULTS).write_text("\n".join(whole) + "\n{}\n", encoding="utf-8")  # whole, but not a record
    assert torn_tail((run / RESULTS).read_bytes()) is None
    with pytest.raises(CEJudgeError, match=rf"{RESULTS}:{N + 1}: record: field 'id' is missing"):
        read_records(run / RESULTS)


def test_resume_over_a_torn_tail_judges_the_item_again(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tear(run)
    argv = evaluate(data=json.loads((run / RUN).read_text())["data"])(run.parent)
    argv[argv.index("--out") + 1] = str(run)
    assert main(argv) == 0
    read = read_run(run)
    assert (len(read.records), read.torn, read.n_missing) == (N, 0, 0)
    assert "judged again" in capsys.readouterr().err
