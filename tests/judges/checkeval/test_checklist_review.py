"""`cejudge checklist build|review|show` with a fake backbone, the `qags` task, and the shipped checklists
held to the filter's own criteria."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from cejudge_dspy.backbones import _spec as backbones
from cejudge_dspy.cli import main
from cejudge_dspy.data import load_items
from cejudge_dspy.judges.checkeval import REVIEW_REASONS, Checklist
from cejudge_dspy.judges.checkeval._checklist import HUMAN
from cejudge_dspy.tasks import load_task
from tests import support
from tests.support.fakes import fake_lm

REPO = support.REPO


def _questions(inputs: dict[str, str], field: str) -> list[str]:
    return json.loads(inputs[field])


@pytest.fixture
def checklists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty checklist folder as the default, and a fake backbone whose filter call always fails."""
    rules = {
        "diversify": lambda i: {"diversified": [f"Is the {i['subdimension']} of the summary right?"]},
        "elaborate": lambda i: {"elaborated": []},
        "filter": lambda i: "no decisions here",
    }
    lm, _ = fake_lm(rules)
    monkeypatch.setattr(backbones, "make_lm", lambda spec, **kw: lm)
    monkeypatch.setenv("CEJUDGE_CHECKLISTS", str(tmp_path))
    return tmp_path


def error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    return err


def _saved(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text())["questions"]


def test_build_writes_beside_a_reviewed_checklist_unless_forced(
    checklists: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["checklist", "build", "--task", "qags", "--no-augment"]) == 0
    path = checklists / "qags.json"
    assert f"wrote {path}" in capsys.readouterr().err
    # An unreviewed build is simply rebuilt in place.
    assert main(["checklist", "build", "--task", "qags", "--no-augment"]) == 0
    assert not (checklists / "qags.new.json").exists()
    assert main(["checklist", "review", str(path), "--drop", "2", "--reason", "duplicate: same as #1"]) == 0
    reviewed = path.read_bytes()
    capsys.readouterr()
    assert main(["checklist", "build", "--task", "qags", "--no-augment"]) == 0
    err = capsys.readouterr().err
    beside = checklists / "qags.new.json"
    line = f"{path} holds a person's review (1 question(s) kept or dropped by hand), so it was left as it is"
    assert line in err and f"this build is {beside} (--force overwrites)" in err.replace("\n", "")
    assert path.read_bytes() == reviewed and beside.is_file()
    # The second build beside it replaces the first (nobody reviewed that one).
    assert main(["checklist", "build", "--task", "qags", "--no-augment"]) == 0
    assert not (checklists / "qags.new-2.json").exists()
    assert main(["checklist", "build", "--task", "qags", "--no-augment", "--force"]) == 0
    assert not any(q["reviewed"] for q in _saved(path))


def test_build_keeps_a_file_it_cannot_read(checklists: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (checklists / "qags.json").write_text("{not json")
    assert main(["checklist", "build", "--task", "qags", "--no-augment"]) == 0
    assert "qags.json is not a checklist file this version reads" in capsys.readouterr().err
    assert (checklists / "qags.json").read_text() == "{not json"
    assert Checklist.load("qags", checklists / "qags.new.json").kept()


def test_review_drops_and_keeps_with_the_reason_recorded(
    checklists: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["checklist", "build", "--task", "qags"]) == 0
    err = capsys.readouterr().err
    path = checklists / "qags.json"
    # The filter failed even one question at a time: said on stderr and recorded, questions kept in file.
    assert "failed: consistency/entities and numbers Filter: " in err
    assert "4 generated question(s) went unreviewed (filter_failed)" in err.replace("\n", " ")
    questions = _saved(path)
    n = 1 + next(i for i, q in enumerate(questions) if q["drop_reason"] == "filter_failed")
    keep = ["checklist", "review", str(path), "--keep", str(n), "--reason", "read it: Yes means better"]
    assert main(keep) == 0
    assert main(["checklist", "review", str(path), "--drop", "1", "2", "--reason", "unclear"]) == 0
    out = capsys.readouterr()
    assert f"kept #{n}: Is the supported statements of the summary right?" in out.err
    questions = _saved(path)
    assert questions[n - 1] | {"text": ""} == {
        "text": "",
        "dimension": "consistency",
        "subdimension": "supported statements",
        "origin": "diversified",
        "kept": True,
        "drop_reason": None,
        "reviewed": True,
        "review_note": "read it: Yes means better (was dropped: filter_failed)",
    }
    assert [(q["kept"], q["drop_reason"], q["review_note"]) for q in questions[:2]] == [
        (False, HUMAN + "unclear", None)
    ] * 2
    checklist = Checklist.load("qags", path)
    assert checklist.by_person() == 3 and len(checklist.kept()) == 8 - 2 + 1
    assert "qags checklist: numbers for --drop N / --keep N" in out.out


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--drop", "99", "--reason", "unclear"], "error: --drop: no question 99: .* has 1 to 12"),
        (["--drop", "1", "--reason", "tone"], "error: --reason: 'tone' does not start with a drop reason"),
        (["--drop", "1"], "error: --reason: --drop needs --reason"),
        (["--keep", "1", "--drop", "2", "--reason", "x"], "error: --keep: give --drop or --keep, not both"),
        (
            ["--drop", *map(str, range(1, 13)), "--reason", "unclear"],
            "with no question kept; nothing changed",
        ),
    ],
)
def test_review_refuses_bad_flags_in_one_line(
    flags: list[str], expected: str, checklists: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["checklist", "build", "--task", "qags"]) == 0
    path = checklists / "qags.json"
    before = path.read_bytes()
    capsys.readouterr()
    assert main(["checklist", "review", str(path), *flags]) == 2
    assert re.search(expected, error_line(capsys))
    assert path.read_bytes() == before


def test_review_and_show_need_a_readable_file(checklists: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["checklist", "review", str(checklists / "none.json")]) == 2
    assert "error: no checklist file at" in error_line(capsys)
    (checklists / "bad.json").write_text("[1, 2]")
    assert main(["checklist", "show", str(checklists / "bad.json")]) == 2
    assert "not a checklist file (no 'task' name)" in error_line(capsys)
    assert main(["checklist", "build", "--task", "qags", "--drop", "1"]) == 2
    assert "belong to `checklist review`" in error_line(capsys)
    assert main(["checklist", "show", str(REPO / "checklists" / "summeval.json")]) == 0
    assert "dropped because:" in capsys.readouterr().out


def test_every_review_reason_is_documented_in_the_checklist_tutorial() -> None:
    page = (REPO / "docs" / "tutorials" / "checkeval-checklist.md").read_text(encoding="utf-8")
    section = page[page.index("cejudge checklist review") :]
    for code in [*REVIEW_REASONS, "filter_failed"]:
        assert f"`{code}`" in section, code


# -- qags ------------------------------------------------------------------------------------------


def test_qags_declaration() -> None:
    spec = load_task("qags")
    assert (spec.mode, spec.metric, [d.name for d in spec.dimensions]) == (
        "pointwise",
        "spearman",
        ["consistency"],
    )
    (dim,) = spec.dimensions
    assert dim.human_key == "consistency" and len(dim.subdimensions) >= 2
    seeds = [q for s in dim.subdimensions for q in s.seeds]
    assert all(q.endswith("?") for q in seeds) and len(seeds) == len(set(seeds))
    # doc_id repeats across the CNN/DM and XSum files: ids come from the file stem and row instead.
    assert spec.dataset.fields == {"instruction": "source", "response": "system_output", "label": "scores"}


@pytest.mark.shared_data
def test_qags_samples_load_with_their_consistency_scores(shared_data: Path) -> None:
    ids = set()
    for name in ("qags_cnndm_sample.jsonl", "qags_xsum_sample.jsonl"):
        items = load_items(load_task("qags"), str(shared_data / name))
        assert len(items) == 30 and all(i.response and i.instruction for i in items)
        assert all(set(i.label) == {"consistency"} and 0 <= i.label["consistency"] <= 1 for i in items)
        ids |= {i.id for i in items}
    assert len(ids) == 60


# -- the shipped checklists ------------------------------------------------------------------------


def _core(text: str) -> str:
    """A question without its parenthetical gloss, case and punctuation: near-duplicates compare equal."""
    return " ".join(re.findall(r"[a-z]+", re.sub(r"\(.*?\)", "", text.lower())))


@pytest.mark.parametrize("name", ["summeval", "qags"])
def test_shipped_checklists_pass_the_filters_own_criteria(name: str) -> None:
    checklist = Checklist.load(name, REPO / "checklists" / f"{name}.json")
    assert checklist.augmented and checklist.by_person() > 0  # built, then reviewed by a person
    kept = checklist.kept()
    for dim in {q.dimension for q in kept}:
        cores = [_core(q.text) for q in kept if q.dimension == dim]
        assert len(cores) == len(set(cores)), f"{dim}: a kept question repeats another"
    for q in kept:
        # Seeds are written by hand; a generated question must name what it asks about.
        assert q.origin == "seed" or "summary" in q.text.lower(), f"not about the response: {q.text}"
        assert "pronoun in the article" not in q.text, q.text
        if q.dimension == "consistency":
            assert not re.search(r"\b(tone|style)\b", q.text), f"off-dimension: {q.text}"
    # Every drop says why; a person's drop uses a documented reason.
    for q in checklist.questions:
        if not q.kept:
            assert q.drop_reason, q.text
            if q.drop_reason.startswith(HUMAN):
                assert q.drop_reason.removeprefix(HUMAN) in REVIEW_REASONS, q.drop_reason
