"""The simulated backbone answers every CheckEval stage, so the CheckEval tutorial's commands
(docs/tutorials/checkeval-checklist.md) build an augmented, filtered checklist and judge with it into ok
records on `--lm simulated:0`, deterministically."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from cejudge_dspy.cli import main
from tests import support

DATA = support.REPO / "tests" / "fixtures" / "data" / "summeval.jsonl"
LM = ["--lm", "simulated:0", "--no-cache"]


def _build(out: Path) -> dict:
    assert main(["checklist", "build", "--task", "summeval", "--out", str(out), *LM]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_a_simulated_build_augments_and_filters_every_sub_dimension(tmp_path: Path) -> None:
    built = _build(tmp_path / "summeval.json")
    assert built["failures"] == {}  # every Diversify, Elaborate and Filter call was answered and parsed
    questions = built["questions"]
    origins = Counter(q["origin"] for q in questions)
    assert origins["diversified"] > 0 and origins["elaborated"] > 0
    subs = {(q["dimension"], q["subdimension"]) for q in questions}
    for dim, sub in subs:  # each sub-dimension got generated questions, not only its seeds
        assert any(
            q["origin"] != "seed" for q in questions if (q["dimension"], q["subdimension"]) == (dim, sub)
        )
    reasons = Counter(q.get("drop_reason") for q in questions if not q["kept"])
    assert reasons and set(reasons) <= {"off_dimension", "duplicate"}  # the filter decided, none failed
    assert all(q["kept"] for q in questions if q["origin"] == "seed")
    assert _build(tmp_path / "again.json")["questions"] == questions  # deterministic


def test_the_tutorial_judges_with_the_built_checklist_into_ok_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "checklists"
    folder.mkdir()
    kept = [q["text"] for q in _build(folder / "summeval.json")["questions"] if q["kept"]]
    monkeypatch.setenv("CEJUDGE_CHECKLISTS", str(folder))
    out = tmp_path / "run"
    argv = ["evaluate", "--task", "summeval", "--method", "checkeval", "--data", str(DATA), "--out", str(out)]
    assert main([*argv, *LM, "--bootstrap", "0"]) == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(records) == 3 and {r["status"] for r in records} == {"ok"}
    answers = [a for r in records for a in r["result"]["details"]["answers"]]
    assert {a["question"] for a in answers} == set(kept)  # the built checklist's kept questions were asked
    assert Counter(a["answer"] for a in answers).keys() == {"yes", "no"}  # every answer read, both kinds
    scores = [r["result"]["score"] for r in records]
    assert all(0 < s < 1 for s in scores)
