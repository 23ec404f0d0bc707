"""`JudgeMetric` (issue #48): a task's judge as a DSPy metric, in `dspy.Evaluate` and as GEPA's metric.

The program judged is a one-predictor translator on a scripted fake LM (tests/support/fakes.py answers
its `translation` output); the judge runs on the simulated backbone, chosen by the metric's `backbone`
argument or by the current `dspy.context`, never by the program's own LM."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import dspy
import pytest

import cejudge_dspy
from cejudge_dspy.backbones import BackboneOptions, make_lm
from cejudge_dspy.bridges import JudgeMetric, UnparsedJudgment
from cejudge_dspy.errors import BackboneError, InputError
from tests.support.fakes import fake_lm

ENGLISH = {
    "Der Hund schläft im Garten.": "The dog is sleeping in the garden.",
    "Morgen regnet es vielleicht.": "It may rain tomorrow.",
    "Sie liest ein Buch über Vögel.": "She is reading a book about birds.",
    "Das Konzert beginnt um acht.": "The concert starts at eight.",
}
SOURCES = list(ENGLISH)


def student_lm() -> tuple[dspy.LM, Any]:
    """The translator's own LM: a scripted fake that answers the `translation` output in English."""
    return fake_lm({"reference_translation": lambda i: {"translation": ENGLISH[i["text"]]}})


class Translate(dspy.Signature):
    """Translate the text into the target language."""

    text: str = dspy.InputField(desc="The text to translate.")
    target_language: str = dspy.InputField(desc="The language to translate into.")
    translation: str = dspy.OutputField(desc="The translation.")


def translator() -> dspy.Module:
    return dspy.Predict(Translate)


def examples() -> list[dspy.Example]:
    return [
        dspy.Example(
            id=f"t{i}", text=s, target_language="English", language="de", response_language="en"
        ).with_inputs("text", "target_language")
        for i, s in enumerate(SOURCES)
    ]


TRANSLATION_FIELDS = {"instruction": "text", "response": "translation"}


def test_in_dspy_evaluate_the_score_is_the_judges_scale_mapped_onto_0_1() -> None:
    metric = JudgeMetric("literary", backbone="simulated:0", fields=TRANSLATION_FIELDS)
    program_lm, engine = student_lm()
    with dspy.context(lm=program_lm):
        outcome = dspy.Evaluate(devset=examples(), metric=metric, num_threads=2, display_progress=False)(
            translator()
        )
    assert len(outcome.results) == 4
    values = []
    for _example, _pred, value in outcome.results:
        result = value.result
        assert result.ok and result.method == "cejudge"
        assert value.score == pytest.approx((result.score - 1) / 6)  # literary's scale is 1-7
        assert "Checklist for the response" in value.feedback
        assert all(item[:40] in value.feedback for item in result.checklists["response"][:3])
        values.append(value.score)
    assert outcome.score == pytest.approx(100 * sum(values) / 4, abs=0.01)
    # The program ran on its own LM; the judge's stages never reached it.
    assert {c.stage for c in engine.calls} == {"reference_translation"}


def test_the_judge_runs_on_the_current_dspy_context_when_no_backbone_is_given() -> None:
    metric = JudgeMetric("literary", fields=TRANSLATION_FIELDS)
    example = examples()[0]
    pred = dspy.Prediction(translation="The dog sleeps in the garden.")
    with pytest.raises(BackboneError, match="the judge has no backbone"):
        metric(example, pred)
    with dspy.context(lm=make_lm("simulated:0")):
        value = metric(example, pred)
    assert 0.0 <= value.score <= 1.0 and value.result.ok
    # The same judgment on a backbone given by argument (the simulated backbone is deterministic).
    assert (
        JudgeMetric("literary", backbone="simulated:0", fields=TRANSLATION_FIELDS)(example, pred).score
        == value.score
    )


def test_pairwise_compares_the_prediction_with_the_examples_reference() -> None:
    """Swapping the prediction and the reference swaps the verdict: the prediction is response A."""
    metric = JudgeMetric(
        "chat", "direct", backbone="simulated:0", fields={"instruction": "question", "reference": "gold"}
    )
    first, second = "Paris is the capital of France.", "The capital of France is Paris, on the Seine."
    ask = {"question": "What is the capital of France?", "language": "en"}
    one = metric(dspy.Example(**ask, gold=second), dspy.Prediction(response=first))
    other = metric(dspy.Example(**ask, gold=first), dspy.Prediction(response=second))
    assert {one.result.verdict, other.result.verdict} == {"A", "B"}
    assert one.score + other.score == 1.0 and {one.score, other.score} == {0.0, 1.0}
    better = one if one.score == 1.0 else other
    assert "the response is better than the reference answer" in better.feedback


def test_missing_fields_are_one_line_errors_naming_the_field() -> None:
    metric = JudgeMetric("chat", backbone="simulated:0")
    with pytest.raises(InputError, match=r"field 'reference': the example has no field 'reference'"):
        metric(dspy.Example(instruction="q"), dspy.Prediction(response="a"))
    with pytest.raises(
        InputError, match=r"the prediction has no field 'response'.*fields=\{'response': NAME\}"
    ):
        metric(dspy.Example(instruction="q", reference="r"), dspy.Prediction(answer="a"))
    with pytest.raises(InputError, match="unknown field 'respones'"):
        JudgeMetric("chat", backbone="simulated:0", fields={"respones": "x"})


def test_the_backbone_is_one_argument_its_settings_a_backbone_options() -> None:
    """`backbone=`: a BackboneOptions with its settings, a spec with the default ones, or a dspy.LM as it
    is; the old `lm` / `lm_options` and a typo are refused naming the nearest known keyword."""
    tuned = JudgeMetric("chat", method="direct", backbone=BackboneOptions(lm="simulated:0", temperature=0.5))
    plain = JudgeMetric("chat", method="direct", backbone="simulated:0")
    assert tuned.judge._lm.kwargs["temperature"] == 0.5 and plain.judge._lm.kwargs["temperature"] == 0.0
    given = make_lm("simulated:0")
    assert JudgeMetric("chat", backbone=given).judge._lm is given
    with pytest.raises(InputError, match="unknown JudgeMetric option 'lm_options'.*known: .*backbone"):
        JudgeMetric("chat", lm_options={"temperature": 0.5})
    with pytest.raises(InputError, match="unknown JudgeMetric option 'bakbone': did you mean 'backbone'"):
        JudgeMetric("chat", bakbone="simulated:0")
    with pytest.raises(InputError, match="unknown JudgeMetric option 'langauge': did you mean 'language'"):
        JudgeMetric("chat", backbone="simulated:0", langauge="en")
    with pytest.raises(InputError, match="backbone: must be a BackboneOptions, a backbone spec or a dspy.LM"):
        JudgeMetric("chat", backbone=3)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="temperature"):
        JudgeMetric("chat", backbone=BackboneOptions(lm="simulated:0", temperature=9.0))


def test_the_judges_calls_stay_out_of_the_programs_trace() -> None:
    metric = JudgeMetric("literary", backbone="simulated:0", fields=TRANSLATION_FIELDS)
    trace: list[Any] = []
    with dspy.context(trace=trace):
        metric(examples()[1], dspy.Prediction(translation="Maybe it will rain tomorrow."))
    assert trace == []


def test_an_unparsed_judgment_is_raised_or_scored_as_asked_never_graded_in_silence() -> None:
    judge_lm, _ = fake_lm({"score": lambda i: "no fields here"})
    example, pred = examples()[2], dspy.Prediction(translation="She reads a book about birds.")
    metric = JudgeMetric("literary", backbone=judge_lm, fields=TRANSLATION_FIELDS)
    with pytest.raises(UnparsedJudgment, match="gave no judgment") as failure:
        metric(example, pred)
    assert failure.value.result.status == "unparsed"
    lenient = JudgeMetric("literary", backbone=judge_lm, fields=TRANSLATION_FIELDS, unparsed_score=0.0)
    value = lenient(example, pred)
    assert value.score == 0.0 and "This says nothing about the response" in value.feedback


def test_gepa_optimizes_a_program_with_the_judge_as_its_metric() -> None:
    """A tiny GEPA run: the reflection LM reads the judge's checklist feedback and proposes instructions."""
    program_lm, _ = student_lm()
    seen: list[str] = []

    def propose(inputs: dict[str, str]) -> dict[str, Any]:
        seen.append(" ".join(inputs.values()))
        return {"new_instruction": f"{inputs.get('current_instruction', '')} Keep every name and number."}

    reflection_lm, reflection = fake_lm({"other:new_instruction": propose})
    metric = JudgeMetric("literary", backbone="simulated:0", fields=TRANSLATION_FIELDS)
    data = examples()
    gepa = dspy.GEPA(
        metric=metric,
        reflection_lm=reflection_lm,
        max_metric_calls=16,
        reflection_minibatch_size=2,
        num_threads=1,
        seed=0,
    )
    with dspy.context(lm=program_lm):
        optimized = gepa.compile(translator(), trainset=data[:2], valset=data[2:])
    assert isinstance(optimized, dspy.Predict)
    assert seen, "GEPA never asked the reflection LM"
    assert any("Checklist for the response" in s and "The judge (cejudge) scored" in s for s in seen)


def test_importing_the_package_and_the_metric_does_not_import_inspect_ai() -> None:
    code = (
        "import sys, cejudge_dspy; cejudge_dspy.JudgeMetric; import cejudge_dspy.bridges; "
        "print('inspect_ai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert cejudge_dspy.JudgeMetric is JudgeMetric and "JudgeMetric" in cejudge_dspy.__all__
