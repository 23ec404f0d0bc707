"""--reference: the judge's own answer (pairwise, graded) or its own translation of the source (pointwise)
written first and read by the judgment. Fake engines only."""

from __future__ import annotations

import json
from pathlib import Path

import dspy
import pytest

from cejudge_dspy import PairwiseJudge, PointwiseJudge
from cejudge_dspy.cli import main
from cejudge_dspy.judges.verdicts import JudgeResult
from tests.support.fakes import fake_lm

PAIR = {"instruction": "Name a prime number.", "response_a": "9", "response_b": "7"}
TRANSLATION = {
    "instruction": "Der Hund schläft.",
    "response": "The dog sleeps.",
    "language": "de",
    "response_language": "en",
}


def test_a_reference_answer_is_written_once_and_shown_to_both_grades() -> None:
    lm, engine = fake_lm()
    with dspy.context(lm=lm):
        result = PairwiseJudge("chat", reference=True)(**PAIR).result
    (call,) = engine.stage_calls("reference")
    assert call.inputs["instruction"] == "Name a prime number."
    grades = engine.stage_calls("grade")
    assert len(grades) == 2 and {c.inputs["reference"] for c in grades} == {"REF[Name a prime number.]"}
    assert result.details["reference"] == {"answer": "REF[Name a prime number.]", "error": None}
    assert result.usage.by_stage["Reference"] == 1
    assert JudgeResult.from_dict(result.to_dict()).details == result.details


def test_an_unparsable_reference_is_recorded_and_the_grades_read_none() -> None:
    lm, engine = fake_lm({"reference": lambda i: {"reference": "  "}})
    with dspy.context(lm=lm):
        result = PairwiseJudge("chat", reference=True)(**PAIR).result
    assert result.ok and result.details["reference"]["answer"] is None
    assert "empty reference answer" in result.details["reference"]["error"]
    assert {c.inputs["reference"] for c in engine.stage_calls("grade")} == {"none"}


def test_without_the_option_no_reference_is_written_or_shown() -> None:
    lm, engine = fake_lm()
    with dspy.context(lm=lm):
        graded = PairwiseJudge("chat")(**PAIR).result
        paper = PairwiseJudge("chat", judgment="pairwise", reference=True)(**PAIR).result
    assert engine.stage_calls("reference") == [] and "reference" not in graded.details
    assert all("reference" not in c.inputs for c in engine.stage_calls("grade"))
    assert paper.grades == {} and "reference" not in paper.details  # no grades to give it to


@pytest.mark.parametrize(
    "argv",
    [
        ["--task", "chat", "--reference", "--judgment", "pairwise"],
        ["--task", "chat", "--reference", "--method", "direct"],
    ],
)
def test_a_reference_without_grades_to_give_it_to_is_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["evaluate", *argv, "--lm", "simulated:0"])
    err = capsys.readouterr().err.strip()
    assert code != 0 and "\n" not in err and "--reference" in err


def test_a_pointwise_judge_reads_its_own_translation_of_the_source() -> None:
    lm, engine = fake_lm()
    into_german = {**TRANSLATION, "instruction": "The dog sleeps.", "response": "Der Hund schläft.",
                   "language": "en", "response_language": "de"}  # fmt: skip
    with dspy.context(lm=lm):
        result = PointwiseJudge("literary", reference=True, likelihood_check=False)(**into_german).result
    (call,) = engine.stage_calls("reference_translation")
    assert call.inputs == {
        "source_language": "English",
        "target_language": "German",
        "text": "The dog sleeps.",
    }
    (score,) = engine.stage_calls("score")
    assert score.inputs["reference"] == "REF[German: The dog sleeps.]" and result.score == 5
    assert result.details["reference"] == {
        "answer": "REF[German: The dog sleeps.]",
        "error": None,
        "stage": "reference translation",
    }
    assert result.usage.by_stage["ReferenceTranslation"] == 1


def test_into_english_the_reference_is_the_source_s_english_translation_of_stage_2() -> None:
    """One call, not two: the reference stage would translate the same text into the same language as the
    translation stage does for the checklists."""
    lm, engine = fake_lm()
    with dspy.context(lm=lm):
        result = PointwiseJudge("literary", reference=True, likelihood_check=False)(**TRANSLATION).result
    assert engine.stage_calls("reference_translation") == []
    (translate,) = engine.stage_calls("translate")
    assert translate.inputs["text"] == "Der Hund schläft."
    (score,) = engine.stage_calls("score")
    assert score.inputs["reference"] == "EN[Der Hund schläft.]" == result.translations["instruction"]
    assert result.details["reference"] == {
        "answer": "EN[Der Hund schläft.]",
        "error": None,
        "stage": "translate",
    }
    assert "ReferenceTranslation" not in result.usage.by_stage and result.usage.calls == 6
    # Without the translation the checklists need (one direction only), the reference still gets its call.
    lm, engine = fake_lm()
    with dspy.context(lm=lm):
        alone = PointwiseJudge("literary", likelihood_check=False, directions="r2i")(**TRANSLATION).result
    (translate,) = engine.stage_calls("translate")
    assert alone.details["reference"]["answer"] == "EN[Der Hund schläft.]" and alone.usage.calls == 4


def test_an_external_translator_leaves_the_reference_to_the_judge() -> None:
    """With Google (or any service) translating for the checklists, the reference stays the judge's own."""

    class Upper:
        name = "upper"

        async def translate(self, text: str, language: str) -> str:
            return text.upper()

    lm, engine = fake_lm()
    with dspy.context(lm=lm):
        result = PointwiseJudge("literary", translator=Upper(), likelihood_check=False)(**TRANSLATION).result
    assert [c.inputs["target_language"] for c in engine.stage_calls("reference_translation")] == ["English"]
    assert result.details["reference"]["stage"] == "reference translation"
    assert engine.stage_calls("score")[0].inputs["reference"] == "REF[English: Der Hund schläft.]"


def test_a_response_in_its_source_s_language_is_judged_without_a_reference() -> None:
    lm, engine = fake_lm()
    same = {**TRANSLATION, "response": "Der Hund schläft tief.", "response_language": "de"}
    with dspy.context(lm=lm):
        result = PointwiseJudge("literary", reference=True, likelihood_check=False, language_check=False)(
            **same
        ).result
    assert engine.stage_calls("reference_translation") == []
    assert "reference" not in engine.stage_calls("score")[0].inputs
    assert result.ok and "reference" not in result.details


def test_an_unparsable_reference_translation_leaves_the_plain_judgment() -> None:
    lm, engine = fake_lm({"reference_translation": lambda i: {"translation": " "}})
    into_german = {
        "instruction": "The dog sleeps.",
        "response": "Der Hund schläft.",
        "response_language": "de",
    }
    with dspy.context(lm=lm):
        result = PointwiseJudge("literary", reference=True, likelihood_check=False)(**into_german).result
    assert "reference" not in engine.stage_calls("score")[0].inputs
    assert result.ok and "empty reference translation" in result.details["reference"]["error"]


def evaluated(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> Path:
    """The run directory of `cejudge evaluate` on one de-en translation (simulated backbone, no likelihood
    check), with `extra` flags."""
    data = tmp_path / "de-en.jsonl"  # the literary task reads the language pair from the file name
    row = {
        "id": "t1",
        "source": TRANSLATION["instruction"],
        "translation": TRANSLATION["response"],
        "score": 6,
    }
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    argv = ["evaluate", "--task", "literary", "--data", str(data), "--out", str(out), "--lm", "simulated:0"]
    argv += ["--field", "id=id", "--field", "instruction=source", "--field", "response=translation"]
    argv += ["--field", "label=score", "--bootstrap", "0", "--likelihood-check", "off", *extra]
    assert main(argv) == 0, capsys.readouterr().err
    return out


def test_a_pointwise_run_records_the_reference_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = evaluated(tmp_path, capsys, "--reference")
    record = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert record["result"]["details"]["reference"]["answer"] == "[English] Der Hund schläft."
    assert json.loads((out / "run.json").read_text())["reference"] is True


def test_the_panel_shows_the_judge_s_own_translation() -> None:
    from rich.console import Console

    from cejudge_dspy.cli.display import verdict_panel
    from cejudge_dspy.tasks import load_task

    lm, _ = fake_lm()
    with dspy.context(lm=lm):
        result = PointwiseJudge("literary", reference=True, likelihood_check=False)(**TRANSLATION).result
    console = Console(width=200, record=True)
    console.print(verdict_panel(result, load_task("literary")))
    shown = console.export_text()
    assert 'the judge\'s own translation, written first: "EN[Der Hund schläft.]"' in shown


def test_runs_recorded_before_the_option_resume_only_without_a_reference() -> None:
    from cejudge_dspy.runs._identity import identity_value

    assert identity_value({"task": "literary", "method": "cejudge"}, "reference") is False
    assert identity_value({"task": "chat", "method": "cejudge", "judgment": "graded"}, "reference") is False
    assert identity_value({"task": "chat", "method": "cejudge", "judgment": "pairwise"}, "reference") is None
    assert identity_value({"task": "literary", "method": "direct"}, "reference") is None


def test_the_python_defaults_are_the_modes_defaults() -> None:
    from cejudge_dspy.judges.cejudge import reference_default

    assert reference_default("pointwise") and PointwiseJudge("literary").reference is not None
    assert not reference_default("pairwise") and PairwiseJudge("chat").reference is None


def test_a_pointwise_run_from_before_the_shared_english_reference_does_not_resume() -> None:
    """Its references into English came from the reference stage; a resumed run would mix the two."""
    from cejudge_dspy.runs import identity_diff
    from cejudge_dspy.runs._identity import identity_value

    old = {"task": "literary", "method": "cejudge", "reference": True}
    new = {**old, "english_reference": "translate"}
    assert identity_value(old, "english_reference") == "reference translation"
    assert "english_reference: 'reference translation' -> 'translate'" in identity_diff(old, new)
    assert (
        identity_value({"task": "literary", "method": "cejudge", "reference": False}, "english_reference")
        is None
    )
    assert (
        identity_value({"task": "chat", "method": "cejudge", "judgment": "graded"}, "english_reference")
        is None
    )
    translated = {**old, "judge_on": "translated"}
    assert identity_value(translated, "english_reference") is None


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ([], "translate"),
        (["--translator", "none"], "reference translation"),
        (["--no-reference"], None),
        # The judgment reads both texts in English and writes no reference.
        (["--judge-on", "translated"], None),
    ],
)
def test_the_run_records_which_stage_writes_the_english_reference(
    extra: list[str], expected: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = evaluated(tmp_path, capsys, *extra)
    assert json.loads((out / "run.json").read_text())["english_reference"] == expected
    record = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert (record["result"]["details"].get("reference") or {}).get("stage") == expected
