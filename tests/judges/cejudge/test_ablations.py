"""CE-Judge's ablations: each switch changes exactly what reaches each stage and how many calls are made.

The fake engine records every call with its stage and the input fields it received (tests/support/fakes.py);
its answers echo their inputs, so a text's path through the stages is visible. One German pairwise
item (instruction and both responses translated by the `translate` stage) and one en->de pointwise item.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import dspy
import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.errors import CEJudgeError, InputError
from cejudge_dspy.judges.cejudge import PairwiseJudge, PointwiseJudge
from cejudge_dspy.metrics import compare_runs
from tests import support
from tests.support.fakes import FakeEngine, fake_lm

FIXTURES = support.FIXTURES / "data"
INSTRUCTION, A, B = "Nenne eine Primzahl.", "Sieben ist prim.", "Neun ist prim."


def judge_pair(**options: Any) -> tuple[Any, FakeEngine]:
    lm, engine = fake_lm()
    program = PairwiseJudge("chat", judgment="pairwise", orders="single", **options)
    with dspy.context(lm=lm):
        result = program(instruction=INSTRUCTION, response_a=A, response_b=B, language="de").result
    assert result.status == "ok", result.error
    # What the record counts is what the engine saw (the expected count is asserted per test).
    assert result.usage.calls == len(engine.calls)
    return result, engine


def stages(engine: FakeEngine) -> Counter[str]:
    return Counter(call.stage for call in engine.calls)


def test_the_method_as_designed_is_the_baseline() -> None:
    result, engine = judge_pair()
    assert stages(engine) == {
        "concepts": 3,  # instruction, A, B
        "translate": 3,
        "checklist_r2i": 2,
        "checklist_i2r": 2,
        "verdict": 1,
    }
    concepts = ["concept of Nenne eine Primzahl."]
    r2i = engine.stage_calls("checklist_r2i")
    assert {c.inputs["response"]: json.loads(c.inputs["instruction_concepts"]) for c in r2i} == {
        f"EN[{A}]": concepts,
        f"EN[{B}]": concepts,
    }
    (verdict,) = engine.stage_calls("verdict")
    assert (verdict.inputs["instruction"], verdict.inputs["response_a"]) == (INSTRUCTION, A)
    assert json.loads(verdict.inputs["checklist_a"]) == [
        f"r2i about EN[{A}]?",
        f"i2r about EN[{INSTRUCTION}]?",
    ]


def test_without_concepts_no_concepts_stage_and_empty_concept_inputs() -> None:
    result, engine = judge_pair(concepts=False)
    # Without the responses' concepts, the instruction->response checklist reads only the instruction:
    # both responses share one call (shared work), and get the same questions.
    assert stages(engine) == {"translate": 3, "checklist_r2i": 2, "checklist_i2r": 1, "verdict": 1}
    assert result.usage.reused >= 1
    assert (
        result.checklist_parts["a"]["instruction_to_response"]
        == result.checklist_parts["b"]["instruction_to_response"]
    )
    assert {c.inputs["instruction_concepts"] for c in engine.stage_calls("checklist_r2i")} == {"[]"}
    assert {c.inputs["response_concepts"] for c in engine.stage_calls("checklist_i2r")} == {"[]"}
    # The checklists still read the translated texts, and the judgment the originals.
    assert {c.inputs["response"] for c in engine.stage_calls("checklist_r2i")} == {f"EN[{A}]", f"EN[{B}]"}
    (verdict,) = engine.stage_calls("verdict")
    assert verdict.inputs["response_a"] == A
    assert result.concepts == {"instruction": [], "a": [], "b": []}


def test_response_to_instruction_only() -> None:
    result, engine = judge_pair(directions="r2i")
    # The instruction's concepts and the responses' English: nothing the reverse direction would read.
    assert stages(engine) == {"concepts": 1, "translate": 2, "checklist_r2i": 2, "verdict": 1}
    assert {c.inputs["text"] for c in engine.stage_calls("concepts")} == {INSTRUCTION}
    assert {c.inputs["text"] for c in engine.stage_calls("translate")} == {A, B}
    (verdict,) = engine.stage_calls("verdict")
    assert json.loads(verdict.inputs["checklist_a"]) == [f"r2i about EN[{A}]?"]
    assert result.checklist_parts["a"] == {
        "response_to_instruction": [f"r2i about EN[{A}]?"],
        "instruction_to_response": [],
    }
    assert result.translations == {"a": f"EN[{A}]", "b": f"EN[{B}]"}


def test_instruction_to_response_only() -> None:
    result, engine = judge_pair(directions="i2r")
    assert stages(engine) == {"concepts": 2, "translate": 1, "checklist_i2r": 2, "verdict": 1}
    assert {c.inputs["text"] for c in engine.stage_calls("concepts")} == {A, B}
    assert {c.inputs["text"] for c in engine.stage_calls("translate")} == {INSTRUCTION}
    (verdict,) = engine.stage_calls("verdict")
    assert json.loads(verdict.inputs["checklist_b"]) == [f"i2r about EN[{INSTRUCTION}]?"]


def test_without_translation_the_checklists_read_the_originals() -> None:
    result, engine = judge_pair(translator="none")
    assert stages(engine) == {"concepts": 3, "checklist_r2i": 2, "checklist_i2r": 2, "verdict": 1}
    assert {c.inputs["response"] for c in engine.stage_calls("checklist_r2i")} == {A, B}
    assert {c.inputs["instruction"] for c in engine.stage_calls("checklist_i2r")} == {INSTRUCTION}
    assert result.translations == {}


def test_judging_the_translated_texts() -> None:
    result, engine = judge_pair(judge_on="translated")
    assert stages(engine) == {
        "concepts": 3,
        "translate": 3,
        "checklist_r2i": 2,
        "checklist_i2r": 2,
        "verdict": 1,
    }
    (verdict,) = engine.stage_calls("verdict")
    assert verdict.inputs["instruction"] == f"EN[{INSTRUCTION}]"
    assert (verdict.inputs["response_a"], verdict.inputs["response_b"]) == (f"EN[{A}]", f"EN[{B}]")


def test_judging_translated_texts_of_one_direction_still_translates_both() -> None:
    # r2i alone does not need the instruction's English; judging the translations does.
    _, engine = judge_pair(directions="r2i", judge_on="translated")
    assert stages(engine) == {"concepts": 1, "translate": 3, "checklist_r2i": 2, "verdict": 1}


def test_graded_judgment_grades_the_translated_texts() -> None:
    lm, engine = fake_lm()
    program = PairwiseJudge("chat", judge_on="translated")  # graded judgment, both orders
    with dspy.context(lm=lm):
        result = program(instruction=INSTRUCTION, response_a=A, response_b=B, language="de").result
    assert result.usage.calls == len(engine.calls) == 3 + 3 + 4 + 2 + 2  # equal grades: both orders run
    assert {c.inputs["response"] for c in engine.stage_calls("grade")} == {f"EN[{A}]", f"EN[{B}]"}


def test_pointwise_judgment_on_the_translation_says_english() -> None:
    lm, engine = fake_lm()
    program = PointwiseJudge("literary", judge_on="translated", language_check=False)
    source, translation = "The cat sleeps.", "Die Katze schläft."
    with dspy.context(lm=lm):
        result = program(
            instruction=source, response=translation, language="en", response_language="de"
        ).result
    assert result.usage.calls == len(engine.calls)
    # English source: no translation and no translate call; the German response is translated.
    assert stages(engine) == {
        "concepts": 2,
        "translate": 1,
        "checklist_r2i": 1,
        "checklist_i2r": 1,
        "score": 1,
    }
    (score,) = engine.stage_calls("score")
    assert (score.inputs["instruction"], score.inputs["response"]) == (source, f"EN[{translation}]")
    assert (score.inputs["source_language"], score.inputs["response_language"]) == ("English", "English")
    with dspy.context(lm=lm):
        PointwiseJudge("literary", language_check=False)(
            instruction=source, response=translation, language="en", response_language="de"
        )
    default = engine.stage_calls("score")[-1]
    assert (default.inputs["response"], default.inputs["response_language"]) == (translation, "German")


def test_pointwise_judgment_reads_the_checklist_and_writes_answers_only_when_asked() -> None:
    from cejudge_dspy.judges.cejudge._signatures import ANSWER_STEP, SILENT_STEP

    lm, engine = fake_lm()
    source, translation = "The cat sleeps.", "Die Katze schläft."
    results, prompts = {}, {}
    for answers in (True, False):
        options = {"answers": True} if answers else {}  # the default writes none
        program = PointwiseJudge("literary", language_check=False, **options)
        with dspy.context(lm=lm):
            results[answers] = program(
                instruction=source, response=translation, language="en", response_language="de"
            ).result
        prompts[answers] = " ".join(lm.history[-1]["messages"][0]["content"].split())
    answered, silent = engine.stage_calls("score")
    # The same checklist, texts and reference reach both judgments; only what they write differs.
    assert answered.inputs == silent.inputs and "checklist" in silent.inputs
    assert results[True].answers == ["q -> fine"] and results[False].answers == []
    assert results[True].score == results[False].score == 5 and results[False].status == "ok"
    assert ANSWER_STEP in prompts[True] and SILENT_STEP not in prompts[True]
    assert SILENT_STEP in prompts[False] and ANSWER_STEP not in prompts[False]
    assert "`answers`" in prompts[True] and "`answers`" not in prompts[False]
    # The ablation removes no stage: both judgments made the same calls.
    half = len(engine.calls) // 2
    assert Counter(c.stage for c in engine.calls[:half]) == Counter(c.stage for c in engine.calls[half:])


def test_without_answers_needs_a_judgment_that_answers() -> None:
    from cejudge_dspy.judges.cejudge._signatures import GradeResponse, without_answers

    with pytest.raises(ValueError, match="GradeResponse has no answering step"):
        without_answers(GradeResponse)


def test_stage_names_stay_the_same_under_every_ablation() -> None:
    names = [n for n, _ in PairwiseJudge("chat").named_predictors()]
    for options in ({"concepts": False}, {"directions": "r2i"}, {"judge_on": "translated"}):
        assert [n for n, _ in PairwiseJudge("chat", **options).named_predictors()] == names
    pointwise = [n for n, _ in PointwiseJudge("literary").named_predictors()]
    assert [n for n, _ in PointwiseJudge("literary", answers=True).named_predictors()] == pointwise


@pytest.mark.parametrize(
    ("options", "message"),
    [({"directions": "one"}, "directions"), ({"judge_on": "english"}, "judge_on")],
)
def test_bad_ablation_values_are_one_line(options: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        PairwiseJudge("chat", **options)


# --- the CLI: flags, run identity, and `cejudge compare` on runs that differ in one ablation ----------


def evaluate(out: Path, *flags: str) -> int:
    data = FIXTURES / "pairwise_labels.jsonl"
    argv = ["evaluate", "--task", "chat", "--data", str(data), "--lm", "simulated:0", "--out", str(out)]
    return main([*argv, "--bootstrap", "0", *flags])


@pytest.mark.parametrize(
    ("flags", "key", "value"),
    [
        (["--no-concepts"], "concepts", False),
        (["--directions", "i2r"], "directions", "i2r"),
        (["--judge-on", "translated"], "judge_on", "translated"),
        (["--translator", "none"], "translator", "none"),
    ],
)
def test_each_ablation_is_in_the_run_identity_and_compare_names_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    flags: list[str],
    key: str,
    value: Any,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # the compare table on one line per row
    base, ablated = tmp_path / "base", tmp_path / "ablated"
    assert evaluate(base) == 0 and evaluate(ablated, *flags) == 0
    config = json.loads((ablated / "run.json").read_text())
    assert config[key] == value
    cmp = compare_runs(base, ablated, n_resamples=0)
    assert cmp["differences"] == {key: [json.loads((base / "run.json").read_text())[key], value]}
    assert cmp["common_items"] == 4
    capsys.readouterr()
    assert main(["compare", str(base), str(ablated)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"A and B differ in: {key}" in out and "strict A ┃ strict B ┃ p (strict)" in out
    assert {"strict_a", "strict_b", "strict_test"} <= set(cmp["rows"][-1])


def test_the_default_run_records_the_method_as_designed(tmp_path: Path) -> None:
    assert evaluate(tmp_path / "run") == 0
    config = json.loads((tmp_path / "run" / "run.json").read_text())
    assert (config["concepts"], config["directions"], config["judge_on"]) == (True, "both", "original")
    assert config["language_check"] is None  # chat declares no response-language check


def test_a_resume_with_another_ablation_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert evaluate(tmp_path / "run") == 0
    assert evaluate(tmp_path / "run", "--directions", "r2i") == 2
    assert "directions: 'both' -> 'r2i'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--method", "direct", "--no-concepts"], "--no-concepts"),
        (["--method", "direct", "--judge-on", "translated"], "--judge-on"),
        (["--language-check", "off"], "--language-check"),  # chat declares no language check
        (["--no-answers"], "--no-answers"),  # chat's graded judgment writes no answers
        (["--judgment", "pairwise", "--answers"], "--answers"),  # the paper's pairwise judgment always does
        (["--method", "direct", "--no-answers"], "--no-answers"),
    ],
)
def test_an_ablation_that_does_not_apply_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], named: str
) -> None:
    assert evaluate(tmp_path / "run", *flags) == 2
    assert capsys.readouterr().err.startswith(f"error: {named}:")
    assert not (tmp_path / "run").exists()


def test_compare_refuses_only_runs_it_cannot_compare(tmp_path: Path) -> None:
    assert evaluate(tmp_path / "chat") == 0
    other = tmp_path / "changed-data" / "pairwise_labels.jsonl"  # the same ids, one text changed
    other.parent.mkdir()
    rows = [json.loads(line) for line in (FIXTURES / "pairwise_labels.jsonl").read_text().splitlines()]
    rows[0]["response_a"] = "Blue."
    other.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = ["evaluate", "--task", "chat", "--data", str(other), "--lm", "simulated:0", "--bootstrap", "0"]
    assert main([*argv, "--out", str(tmp_path / "changed")]) == 0
    with pytest.raises(CEJudgeError, match="item pairwise_labels/0 has other texts"):
        compare_runs(tmp_path / "chat", tmp_path / "changed", n_resamples=0)


def test_runs_recorded_before_the_ablation_options_resume_as_they_were_judged() -> None:
    from cejudge_dspy.runs import identity_diff

    keys = ("concepts", "directions", "judge_on", "language_check")
    now = {"concepts": True, "directions": "both", "judge_on": "original"}
    # A CE-Judge literary run from the graded-judgment release (it records `judgment`) ran the check.
    graded_release = {"task": "literary", "method": "cejudge", "judgment": None}
    assert identity_diff(graded_release, {**graded_release, **now, "language_check": True}, keys) == ""
    # One from before that release did not: it resumes only with --language-check off.
    older = {"task": "literary", "method": "cejudge"}
    assert (
        identity_diff(older, {**older, **now, "language_check": True}, keys)
        == "language_check: False -> True"
    )
    assert identity_diff(older, {**older, **now, "language_check": False}, keys) == ""
    # Other methods and tasks without the check record None for all four.
    direct = {"task": "chat", "method": "direct"}
    assert identity_diff(direct, {**direct, **dict.fromkeys(keys)}, keys) == ""
    chat = {"task": "chat", "method": "cejudge", "judgment": "graded"}
    assert identity_diff(chat, {**chat, **now, "language_check": None}, keys) == ""


def test_answers_is_in_a_pointwise_run_identity_and_old_runs_resume_with_answers(tmp_path: Path) -> None:
    from cejudge_dspy.runs import identity_diff

    liteval = FIXTURES / "liteval"
    argv = ["evaluate", "--task", "literary", "--data", str(liteval), "--lm", "simulated:0", "--limit", "2"]
    assert main([*argv, "--bootstrap", "0", "--out", str(tmp_path / "silent")]) == 0  # the default
    assert main([*argv, "--bootstrap", "0", "--out", str(tmp_path / "base"), "--answers"]) == 0
    silent = json.loads((tmp_path / "silent" / "run.json").read_text())
    base = json.loads((tmp_path / "base" / "run.json").read_text())
    assert (silent["answers"], base["answers"]) == (False, True)
    for run, written in (("silent", False), ("base", True)):
        lines = (tmp_path / run / "results.jsonl").read_text().splitlines()
        assert lines and all(bool(json.loads(x)["result"]["answers"]) == written for x in lines)
    # An old run (answers written) resumes only with --answers.
    assert main([*argv, "--bootstrap", "0", "--out", str(tmp_path / "base")]) == 2
    # A pointwise CE-Judge run from before the option wrote answers; a pairwise one has no such setting.
    older = {"task": "literary", "method": "cejudge"}
    assert identity_diff(older, {**older, "answers": True}, ("answers",)) == ""
    assert identity_diff(older, {**older, "answers": False}, ("answers",)) == "answers: True -> False"
    chat = {"task": "chat", "method": "cejudge", "judgment": "graded"}
    assert identity_diff(chat, {**chat, "answers": None}, ("answers",)) == ""
