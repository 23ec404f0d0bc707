"""`cejudge consistency` end to end on the simulated backbone (its translation stage answers `[Korean]
text`), its refusals before anything is written, parallel versions from `--field FIELD@LANG=COLUMN`, and
`cejudge view` on the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cejudge_dspy.cli import main
from tests import support

DATA = support.BENCHMARKS / "obvious" / "pairwise.jsonl"
BASE = ["consistency", "--task", "chat", "--lm", "simulated:0", "--bootstrap", "50"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("consistency") / "run"
    argv = [*BASE, "--data", str(DATA), "--limit", "4", "--languages", "ko,de", "--languages", "ja"]
    assert main([*argv, "--translator", "llm", "--out", str(out)]) == 0
    return out


def test_the_llm_translator_renders_every_item_and_both_judges_judge_each_rendering(run: Path) -> None:
    lines = [json.loads(x) for x in (run / "renderings.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 4 * 3 and all(x["status"] == "ok" for x in lines)
    korean = [x for x in lines if x["language"] == "ko"]
    assert all(x["texts"]["instruction"].startswith("[Korean] ") for x in korean)
    for rendering in ("original", "ko", "de", "ja"):
        for method in ("cejudge", "direct"):
            child = run / f"{rendering}-{method}"
            assert len((child / "results.jsonl").read_text(encoding="utf-8").splitlines()) == 4
            assert json.loads((child / "run.json").read_text(encoding="utf-8"))["rendering"] == rendering
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert set(summary["by_language"]) == {"ko", "de", "ja"}
    assert "cejudge vs direct" in summary["by_language"]["ja"]["paired"]
    assert summary["by_language"]["ko"]["direct"]["flip_rate"]["n"] == 4


def test_view_shows_the_renderings_side_by_side_and_the_flip_matrix(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["view", str(run), "--bootstrap", "0"]) == 0
    page = (run / "view.html").read_text(encoding="utf-8")
    assert "Flip matrix" in page and "Renderings side by side" in page
    assert "[Japanese] " in page and "cejudge vs direct" in page


def test_a_rerun_resumes_and_other_languages_are_refused(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*BASE, "--data", str(DATA), "--limit", "4", "--out", str(run)]
    assert main([*argv, "--languages", "ko,de,ja"]) == 0
    err = capsys.readouterr().err
    assert "renderings: 0/0 items" in err and "ko-direct: 0/0 items" in err
    assert main([*argv, "--languages", "ko"]) == 2
    assert "other settings (languages:" in capsys.readouterr().err


def test_translator_none_needs_parallel_versions_and_uses_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"id": f"i{k}", "prompt": f"q{k}", "response_a": "yes", "response_b": "no", "label": "A",
         "language": "en", "prompt_de": f"Frage {k}", "a_de": "ja", "b_de": "nein"}
        for k in range(3)
    ]  # fmt: skip
    data = tmp_path / "parallel.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    argv = [
        *BASE,
        "--data",
        str(data),
        "--languages",
        "de",
        "--translator",
        "none",
        "--out",
        str(tmp_path / "r"),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "--translator none" in err and not (tmp_path / "r").exists()
    fields = [
        "--field",
        "instruction@de=prompt_de",
        "--field",
        "response_a@de=a_de",
        "--field",
        "response_b@de=b_de",
    ]
    assert main([*argv, *fields]) == 0
    made = [
        json.loads(x) for x in (tmp_path / "r" / "renderings.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert {x["source"] for x in made} == {"parallel"}
    assert sorted(x["texts"]["instruction"] for x in made) == ["Frage 0", "Frage 1", "Frage 2"]


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--languages", "ko,,de"], "--languages"),
        (["--languages", "xx-nope"], "--languages"),
        (["--languages", "ko", "--methods", "cejudge,nope"], "--methods"),
        (["--languages", "ko", "--field", "label@ko=x"], "--field"),
        (["--languages", "ko,tw", "--translator", "google"], "Twi"),
    ],
)
def test_bad_flags_are_one_line_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], says: str
) -> None:
    out = tmp_path / "r"
    assert main([*BASE, "--data", str(DATA), "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and says in err and "Traceback" not in err
    assert not out.exists()


def test_a_tasks_declared_parallel_versions_are_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from cejudge_dspy.tasks import _catalog

    programs = tmp_path / "programs"
    shutil.copytree(support.REPO / "programs", programs)
    (programs / "chat-de.toml").write_text(
        'name = "chat-de"\nextends = "chat"\n[dataset.fields]\ninstruction = "prompt"\n'
        'response_a = "response_a"\nresponse_b = "response_b"\nlanguage = "language"\n'
        '"instruction@de" = "prompt_de"\n"response_a@de" = "a_de"\n"response_b@de" = "b_de"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("CEJUDGE_PROGRAMS", str(programs))
    _catalog._registry.cache_clear()
    try:
        rows = [
            {"id": "i1", "prompt": "q", "response_a": "yes", "response_b": "no", "language": "en",
             "prompt_de": "Frage", "a_de": "ja", "b_de": "nein"}
        ]  # fmt: skip
        data = tmp_path / "pairs.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        out = tmp_path / "r"
        argv = ["consistency", "--task", "chat-de", "--lm", "simulated:0", "--bootstrap", "0"]
        assert (
            main([*argv, "--data", str(data), "--languages", "de", "--translator", "none", "--out", str(out)])
            == 0
        )
    finally:
        _catalog._registry.cache_clear()
    made = json.loads((out / "renderings.jsonl").read_text(encoding="utf-8"))
    assert made["source"] == "parallel" and made["texts"]["response_b"] == "nein"
    identity = json.loads((out / "consistency.json").read_text(encoding="utf-8"))
    assert identity["parallel_fields"] == {
        "de": {"instruction": "prompt_de", "response_a": "a_de", "response_b": "b_de"}
    }


def test_first_judges_the_first_items_reads_no_further_and_is_its_own_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Three good rows, then one that is not JSON: --first 3 never reads it (--limit would have to).
    rows = DATA.read_text(encoding="utf-8").splitlines()[:4]
    data = tmp_path / "pairs.jsonl"
    data.write_text("\n".join([*rows[:3], "{not json", rows[3]]) + "\n", encoding="utf-8")
    out = tmp_path / "r"
    argv = [*BASE, "--data", str(data), "--languages", "ko", "--bootstrap", "0", "--out", str(out)]
    assert main([*argv, "--first", "3"]) == 0
    first = [json.loads(row)["id"] for row in rows[:3]]
    made = [json.loads(x) for x in (out / "renderings.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [x["id"] for x in made] == first
    for child in ("original-cejudge", "ko-direct"):
        records = [json.loads(x) for x in (out / child / "results.jsonl").read_text().splitlines()]
        assert sorted(r["item"]["id"] for r in records) == sorted(first)
        assert json.loads((out / child / "run.json").read_text())["first"] == 3
    identity = json.loads((out / "consistency.json").read_text(encoding="utf-8"))
    assert identity["first"] == 3 and identity["limit"] is None

    # Another N is another selection: refused in one line naming the difference, nothing judged.
    before = (out / "renderings.jsonl").read_bytes()
    capsys.readouterr()
    assert main([*argv, "--first", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error:") and "other settings (first: 3 -> 2)" in err and "--force-new" in err
    assert (out / "renderings.jsonl").read_bytes() == before


def test_first_is_refused_with_limit_and_below_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*BASE, "--data", str(DATA), "--languages", "ko", "--out", str(tmp_path / "r")]
    with pytest.raises(SystemExit):
        main([*argv, "--first", "3", "--limit", "3"])
    assert "not allowed with argument" in capsys.readouterr().err
    assert main([*argv, "--first", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--first" in err
    assert not (tmp_path / "r").exists()


def test_a_consistency_run_from_before_first_reads_as_none() -> None:
    from cejudge_dspy.consistency import COMPARED
    from cejudge_dspy.runs import identity_diff

    old = {"task": "chat", "limit": 4, "seed": 42}
    assert identity_diff(old, old | {"first": None}, COMPARED) == ""
    assert identity_diff(old, old | {"first": 4}, COMPARED) == "first: None -> 4"
