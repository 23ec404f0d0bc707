"""The prompt fingerprint in run identities: a run never resumes with other prompts (methods.fingerprint)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from cejudge_dspy.backbones import BackboneOptions
from cejudge_dspy.cli import main
from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.evaluate import RunRecipe
from cejudge_dspy.evaluate._worker import JudgeWorker
from cejudge_dspy.judges import build_program, prompt_fingerprint
from cejudge_dspy.judges._machinery._prompt_fingerprint import prompt_description
from cejudge_dspy.judges.cejudge import _stages as stages
from cejudge_dspy.tasks import load_task
from tests.support.bad_inputs import good_data
from tests.test_faults import evaluate_argv


@pytest.mark.parametrize(
    ("task", "method"),
    [("chat", "cejudge"), ("literary", "cejudge"), ("summeval", "checkeval"), ("chat", "direct")],
)
def test_the_same_program_built_twice_has_one_fingerprint(task: str, method: str) -> None:
    first, second = build_program(task, method), build_program(task, method)
    assert prompt_fingerprint(first) == prompt_fingerprint(second)
    assert len(prompt_fingerprint(first)) == 16


def test_an_edited_instruction_field_or_allowed_value_changes_it() -> None:
    base = prompt_fingerprint(build_program("chat"))
    edited = build_program("chat")
    edited.grade.predict.signature = edited.grade.predict.signature.with_instructions("Grade it.")
    assert prompt_fingerprint(edited) != base

    described = build_program("chat")
    sig = described.concepts.predict.signature
    name = next(iter(sig.output_fields))
    described.concepts.predict.signature = sig.with_updated_fields(name, desc="other words")
    assert prompt_fingerprint(described) != base

    # A demo reaches the prompt too (a tuned program with few-shot examples).
    import dspy

    shown = build_program("chat")
    shown.grade.predict.demos = [dspy.Example(instruction="q", response="r", fulfils="yes")]
    assert prompt_fingerprint(shown) != base


def test_the_task_declaration_counts_but_not_where_its_file_lies() -> None:
    spec = load_task("chat")
    base = prompt_fingerprint(build_program(spec))
    moved = dataclasses.replace(spec, path=Path("/elsewhere/chat.toml"))
    assert prompt_fingerprint(build_program(moved)) == base
    reworded = dataclasses.replace(spec, criteria=spec.criteria + " Prefer short answers.")
    assert prompt_fingerprint(build_program(reworded)) != base


def test_checkeval_counts_kept_questions_only() -> None:
    program = build_program("summeval", "checkeval")
    base = prompt_fingerprint(program)
    questions = program.checklist.questions
    first = next(i for i, q in enumerate(questions) if q.kept)
    questions[first] = dataclasses.replace(questions[first], review_note="never reaches a prompt")
    assert prompt_fingerprint(program) == base
    questions[first] = dataclasses.replace(questions[first], kept=False)
    assert prompt_fingerprint(program) != base
    assert "summeval.toml" not in json.dumps(prompt_description(program))


def test_a_run_refuses_to_resume_with_edited_prompts_and_an_older_run_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data, out = good_data(tmp_path), tmp_path / "run"
    argv = evaluate_argv(data, out, "--limit", "4")
    assert main(argv) == 0
    recorded = json.loads((out / "run.json").read_text())["prompts"]
    assert recorded == prompt_fingerprint(build_program("chat"))
    lines = (out / "results.jsonl").read_bytes().splitlines(keepends=True)
    (out / "results.jsonl").write_bytes(b"".join(lines[:-1]))  # one item left to judge
    before = (out / "results.jsonl").read_bytes()

    # The package upgraded: a stage's instruction now reads differently (edited in this process, so the
    # run directory's prompt memo still matches: the program built to judge the item left says otherwise).
    edited = stages.GradeJudgment.signature.with_instructions("Grade the response, strictly.")
    monkeypatch.setattr(stages.GradeJudgment, "signature", edited)
    for memo in (True, False):
        if not memo:
            (out / ".prompts.json").unlink()
        capsys.readouterr()
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert err.startswith("error:") and "prompts:" in err and "--force-new" in err
        assert (out / "results.jsonl").read_bytes() == before

    # A run.json written before fingerprints existed has unknown prompts: it resumes, as it always did.
    old = json.loads((out / "run.json").read_text())
    del old["prompts"]
    (out / "run.json").write_text(json.dumps(old))
    assert main(argv) == 0


def test_a_worker_with_other_prompts_refuses_to_judge() -> None:
    recipe = RunRecipe(
        task="chat", task_version=1, method="cejudge", program="base", program_label="base",
        backbone=BackboneOptions(lm="simulated:0"), prompts="0123456789abcdef",
    )  # fmt: skip
    with pytest.raises(CEJudgeError, match="prompts differ from the driver's"):
        JudgeWorker(recipe)
    same = dataclasses.replace(recipe, prompts=prompt_fingerprint(build_program("chat")))
    assert JudgeWorker(same).recipe is same
