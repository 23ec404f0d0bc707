"""`inspect_scorer` (issue #48) inside a real `inspect_ai.eval` run: Inspect's mock model answers, the judge
runs on the simulated backbone, and the scores keep the verdict, p(A) or score, and the checklists."""

from __future__ import annotations

from pathlib import Path

import pytest

from cejudge_dspy.bridges import inspect_scorer

inspect_ai = pytest.importorskip("inspect_ai")

from inspect_ai import Task  # noqa: E402
from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.solver import generate  # noqa: E402

ANSWERS = ["The dog sleeps in the garden.", "Maybe it will rain tomorrow.", "She reads a book about birds."]
SOURCES = ["Der Hund schläft im Garten.", "Morgen regnet es vielleicht.", "Sie liest ein Buch über Vögel."]


def mock_model() -> object:
    """Inspect's mock model with scripted answers. Each carries its usage: without one, the mock model
    counts tokens with tiktoken, which downloads its encoding (no network in tests)."""
    outputs = []
    for answer in ANSWERS:
        output = ModelOutput.from_content(model="mockllm/model", content=answer)
        output.usage = ModelUsage(input_tokens=10, output_tokens=len(answer.split()), total_tokens=20)
        outputs.append(output)
    return get_model("mockllm/model", custom_outputs=outputs)


def run(task: Task, tmp_path: Path) -> object:
    (log,) = inspect_eval(
        task, model=mock_model(), log_dir=str(tmp_path / "logs"), display="none", max_samples=1
    )
    assert log.status == "success", log.error
    return log


def test_a_pairwise_scorer_compares_the_output_with_the_target(tmp_path: Path) -> None:
    samples = [
        Sample(input=f"Translate into English: {s}", target=f"A reference for: {s}", id=f"s{i}")
        for i, s in enumerate(SOURCES)
    ]
    task = Task(dataset=samples, solver=generate(), scorer=inspect_scorer("chat", backbone="simulated:0"))
    log = run(task, tmp_path)
    assert len(log.samples) == 3
    for sample in log.samples:
        (score,) = sample.scores.values()
        meta = score.metadata
        assert meta["status"] == "ok" and meta["verdict"] in ("A", "B", "tie")
        assert score.value == {"A": 1.0, "tie": 0.5, "B": 0.0}[meta["verdict"]]
        assert "p_a" in meta and set(meta["grades"]) == {"a", "b"}
        assert meta["checklists"] and all(meta["checklists"].values())
        assert score.answer == sample.output.completion and score.answer in ANSWERS
        assert "compared the response (A) with the reference answer (B)" in score.explanation
    (metrics,) = log.results.scores
    mean = sum(s.scores[metrics.name].value for s in log.samples) / 3
    assert metrics.metrics["mean"].value == pytest.approx(mean)


def test_a_pointwise_scorer_scores_the_output_on_the_tasks_scale(tmp_path: Path) -> None:
    samples = [
        Sample(input=s, target="", id=f"p{i}", metadata={"language": "de", "response_language": "en"})
        for i, s in enumerate(SOURCES)
    ]
    task = Task(dataset=samples, solver=generate(), scorer=inspect_scorer("literary", backbone="simulated:0"))
    log = run(task, tmp_path)
    for sample in log.samples:
        (score,) = sample.scores.values()
        meta = score.metadata
        assert meta["score_range"] == [1.0, 7.0] and 1 <= meta["score"] <= 7
        assert score.value == pytest.approx((meta["score"] - 1) / 6)
        assert meta["checklists"]["response"]


def test_an_unreadable_judgment_is_unscored_with_its_reason(tmp_path: Path) -> None:
    from tests.support.fakes import fake_lm

    judge_lm, _ = fake_lm({"score": lambda i: "no fields here"})
    samples = [
        Sample(input=SOURCES[0], target="", id="u0", metadata={"language": "de", "response_language": "en"})
    ]
    task = Task(dataset=samples, solver=generate(), scorer=inspect_scorer("literary", backbone=judge_lm))
    log = run(task, tmp_path)
    (score,) = log.samples[0].scores.values()
    assert score.metadata["status"] == "unparsed" and score.metadata["error_stage"]
    assert "gave no judgment" in score.explanation


def test_the_scorer_takes_the_judge_s_arguments_and_refuses_an_unknown_one() -> None:
    from cejudge_dspy.backbones import BackboneOptions
    from cejudge_dspy.errors import InputError
    from cejudge_dspy.judges import JudgeOptions

    scorer = inspect_scorer(
        "chat", options=JudgeOptions(method="direct"), backbone=BackboneOptions(lm="simulated:0")
    )
    assert callable(scorer)
    with pytest.raises(InputError, match="unknown inspect_scorer option 'lm_options'.*known: .*backbone"):
        inspect_scorer("chat", backbone="simulated:0", lm_options={"api_base": "http://127.0.0.1:1/v1"})
