"""What `cejudge view` shows, checked on hand-counted runs (tests/support/view_runs.py), and the command
itself: the page it writes, its CSV, the missing-extra message and the server's address."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.view import csv_text, item_rows, load_view_run
from cejudge_dspy.view._item_rows import filter_options, outcome
from cejudge_dspy.view._report import answer_matrix, confusion, disagreements, judge_vs_human
from cejudge_dspy.view._run import overview
from tests.support import view_runs
from tests.support.view_runs import chat_run, checkeval_run, literary_run


def test_outcomes_cover_every_case(tmp_path: Path) -> None:
    run = load_view_run(chat_run(tmp_path), n_resamples=0)
    got = {r.id: outcome(r) for r in run.records}
    assert got == {
        "p1": "correct",
        "p2": "wrong",
        "p3": "tie",
        "p4": "gold tie",
        "p5": "unparsed",
        "p6": "error",
    }


def test_rows_and_filter_options(tmp_path: Path) -> None:
    run = load_view_run(chat_run(tmp_path), n_resamples=0)
    rows = {r["id"]: r for r in item_rows(run.records, run.spec, run.name)}
    assert rows["p1"] == {
        "run": "chat-a",
        "id": "p1",
        "language": "en",
        "gold": "A",
        "judge": "A",
        "verdict_AB": "A",
        "verdict_BA": "A",
        "status": "ok",
        "outcome": "correct",
        "error_stage": None,
        "seconds": 0.125,
        "calls": 9,
        "prompt_tokens": 900,
        "completion_tokens": 90,
    }
    assert rows["p3"]["judge"] == "tie" and (rows["p3"]["verdict_AB"], rows["p3"]["verdict_BA"]) == ("A", "B")
    assert rows["p5"]["error_stage"] == "ChecklistFromResponse" and rows["p5"]["judge"] is None
    assert rows["p6"]["calls"] == 0 and rows["p6"]["status"] == "error"
    options = filter_options(list(rows.values()))
    assert options == {
        "languages": ["de", "en"],
        "outcomes": {"correct": 1, "wrong": 1, "tie": 1, "gold tie": 1, "unparsed": 1, "error": 1},
        "score_range": None,
    }


def test_confusion_counts_by_hand(tmp_path: Path) -> None:
    run = load_view_run(chat_run(tmp_path), n_resamples=0)
    # gold A: p1 -> A, p3 -> tie, p6 -> none; gold B: p2 -> A, p5 -> none; gold tie: p4 -> B.
    assert confusion(run.records) == {
        "gold": ["A", "B", "tie"],
        "verdict": ["A", "B", "tie", "none"],
        "counts": [[1, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 0]],
    }


def test_csv_one_row_per_item(tmp_path: Path) -> None:
    run = load_view_run(chat_run(tmp_path), n_resamples=0)
    text = csv_text(item_rows(run.records, run.spec, run.name))
    lines = text.splitlines()
    assert lines[0].split(",")[:8] == [
        "run",
        "id",
        "language",
        "gold",
        "judge",
        "verdict_AB",
        "verdict_BA",
        "status",
    ]
    assert len(lines) == 7
    assert "chat-a,p5,de,B,,,,unparsed,unparsed,ChecklistFromResponse,0.25,9,900,90" in lines
    assert "chat-a,p6,de,A,,,,error,error,,0.5,0,0,0" in lines


def test_pointwise_points_and_language_pairs(tmp_path: Path) -> None:
    run = load_view_run(literary_run(tmp_path), n_resamples=0)
    points = judge_vs_human(run.records, run.spec)
    assert [(p["id"], p["language"], p["judge"], p["human"]) for p in points] == [
        ("l1", "en-de", 3, 60.0),
        ("l2", "en-de", 5, 80.0),
        ("l3", "ru-en", 2, 30.0),
        ("l4", "ru-en", 4, 20.0),
    ]
    rows = item_rows(run.records, run.spec)
    assert filter_options(rows) == {
        "languages": ["en-de", "ru-en"],
        "outcomes": {"scored": 4},
        "score_range": [2, 5],
    }
    # Kendall per pair: en-de concordant (+1), ru-en discordant (-1); the macro average is 0.
    assert run.summary["per_language"]["en-de"]["value"] == 1.0
    assert run.summary["per_language"]["ru-en"]["value"] == -1.0 and run.summary["average"] == 0.0


def test_checkeval_answer_matrix_and_gold(tmp_path: Path) -> None:
    run = load_view_run(checkeval_run(tmp_path), n_resamples=0)
    m = answer_matrix(run.records)
    assert [q["question"] for q in m["questions"]] == ["In order?", "Grammatical?"]
    assert m["items"] == ["s1", "s2", "s3"]
    cells = {(c["q"], c["item"]): c["answer"] for c in m["cells"]}
    assert cells == {
        (0, "s1"): "yes",
        (1, "s1"): "yes",
        (0, "s2"): "no",
        (1, "s2"): "yes",
        (0, "s3"): "yes",
        (1, "s3"): None,
    }
    rows = {r["id"]: r for r in item_rows(run.records, run.spec)}
    # Gold is the mean over the four dimensions: s1 (1+2+3+4)/4, s2 (2+3+2+4)/4.
    assert rows["s1"]["gold"] == 2.5 and rows["s2"]["gold"] == 2.75
    assert rows["s2"]["score_coherence"] == 0.0 and rows["s3"]["score_fluency"] is None
    assert rows["s3"]["judge"] == 1.0


def test_disagreements_between_runs(tmp_path: Path) -> None:
    a = load_view_run(chat_run(tmp_path), n_resamples=0)
    b = load_view_run(chat_run(tmp_path, "chat-b", view_runs.CHAT_B, method="direct"), n_resamples=0)
    got = disagreements([a, b])
    assert [(d["id"], d["predictions"]) for d in got] == [
        ("p2", {"chat-a": "A", "chat-b": "B"}),
        ("p5", {"chat-a": None, "chat-b": "B"}),
    ]


def test_overview_counts(tmp_path: Path) -> None:
    o = overview(load_view_run(chat_run(tmp_path), n_resamples=0))
    assert (o["task"], o["method"], o["backbone"], o["program"]) == ("chat", "cejudge", "simulated:0", "base")
    assert (o["n_items"], o["n_ok"], o["n_unparsed"], o["n_error"]) == (6, 4, 1, 1)
    assert o["calls"] == 45 and o["item_seconds"] == 1.25  # 5 results x 9 calls; 4 x 0.125 + 0.25 + 0.5


def test_view_writes_a_self_contained_page_and_csv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = chat_run(tmp_path), chat_run(tmp_path, "chat-b", view_runs.CHAT_B, method="direct")
    html, out_csv = tmp_path / "page.html", tmp_path / "items.csv"
    code = main(["view", str(a), str(b), "-o", str(html), "--csv", str(out_csv), "--bootstrap", "50"])
    assert code == 0 and str(html.resolve()) in capsys.readouterr().out
    page = html.read_text(encoding="utf-8")
    assert "<link" not in page and " src=" not in page  # nothing to fetch
    data = json.loads(page.split('type="application/json">', 1)[1].split("</script>", 1)[0])
    assert data["csv"] == out_csv.read_text(encoding="utf-8")
    assert len(list(csv.DictReader(io.StringIO(data["csv"])))) == 12  # 6 items x 2 runs
    assert [d["id"] for d in data["comparison"]["disagreements"]] == ["p2", "p5"]
    assert data["comparison"]["tests"][0]["rows"][-1]["language"] == "all"
    assert set(data["runs"][0]["charts"]) == {"metric", "confusion"}
    assert data["runs"][0]["charts"]["confusion"].lstrip().startswith("<svg")


def test_texts_cannot_close_the_data_script(tmp_path: Path) -> None:
    run = chat_run(tmp_path)
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["item"]["instruction"] = "</script><script>alert(1)</script><!--"
    lines[0] = json.dumps(first)
    (run / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["view", str(run), "--bootstrap", "0"]) == 0
    page = (run / "view.html").read_text(encoding="utf-8")
    assert page.count("</script>") == 2 and "alert(1)" in page and "<!--" not in page


def test_missing_extra_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "vl_convert", None)  # import fails as if not installed
    assert main(["view", str(chat_run(tmp_path))]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "pip install 'cejudge-dspy[view]'" in err


def test_not_a_run_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", str(tmp_path / "nope")]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_serve_binds_loopback_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cejudge_dspy.cli import _view as view

    bound = []

    class FakeServer:
        def __init__(self, address: tuple[str, int], handler: object) -> None:
            bound.append(address)
            self.server_address = (address[0], 4321)

        def __enter__(self) -> FakeServer:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def serve_forever(self) -> None:
            raise KeyboardInterrupt

    monkeypatch.setattr(view.http.server, "ThreadingHTTPServer", FakeServer)
    page = tmp_path / "view.html"
    page.write_text("<html></html>", encoding="utf-8")
    assert view.serve(page, 0) == 0 and bound == [("127.0.0.1", 0)]


def test_probability_columns_and_the_decision_rule(tmp_path: Path) -> None:
    run = load_view_run(view_runs.chat_probability_run(tmp_path), n_resamples=0)
    rows = {r["id"]: r for r in item_rows(run.records, run.spec, run.name)}
    # i2: p(A) (0.7 + 1 - 0.6) / 2 = 0.55 -> A under the probability rule; the orders' argmax disagree.
    assert (
        rows["i2"]["judge"] == "A"
        and rows["i2"]["argmax"] == "tie"
        and rows["i2"]["decided_by"] == "probability"
    )
    assert rows["i2"]["p_A"] == pytest.approx(0.55) and rows["i2"]["confidence"] == pytest.approx(0.55)
    header = csv_text(list(rows.values())).splitlines()[0].split(",")
    assert header[-4:] == ["decided_by", "argmax", "p_A", "confidence"]
    assert overview(run)["decision"] == {
        "rule": "probability",
        "tie_band": 0.0,
        "decided_by": {"argmax": 0, "probability": 6},
        "probabilities": {"ok": 6},
    }
    lit = load_view_run(view_runs.literary_probability_run(tmp_path), n_resamples=0)
    e2 = next(r for r in item_rows(lit.records, lit.spec) if r["id"] == "e2")
    assert (
        e2["judge"] == pytest.approx(5.85)
        and e2["expected_score"] == pytest.approx(5.85)
        and e2["argmax"] == 5
    )
    old = overview(load_view_run(chat_run(tmp_path), n_resamples=0))[
        "decision"
    ]  # a run.json without the rule
    assert old == {"rule": "argmax", "tie_band": None, "decided_by": None, "probabilities": None}
