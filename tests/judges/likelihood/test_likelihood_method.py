"""`--method likelihood`: the backbone's likelihood of each response as its own answer, as a judge of its own.

Fake scorers and engines only; the log probabilities are chosen so every figure can be worked out by hand.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dspy
import pytest

from cejudge_dspy.backbones import _spec as backbones
from cejudge_dspy.cli import main
from cejudge_dspy.errors import BackboneError, InputError, TaskError
from cejudge_dspy.judges import (
    JudgeOptions,
    LikelihoodPairwiseJudge,
    build_program,
    check_method_backbone,
    method_names,
    prompt_fingerprint,
)
from cejudge_dspy.judges.cejudge._tiebreak import likelihood_preference
from cejudge_dspy.judges.likelihood._judge import pair_likelihood, pair_p_a
from cejudge_dspy.tasks import load_task
from tests.support.fakes import AsyncFakeEngine, FakeEngine, fake_lm

INSTRUCTION = "Name a prime number."
# Per response, its token log probabilities (the last: the end of its turn).
LOGPROBS = {
    "7": [-0.2, -0.1],  # mean -0.15
    "9": [-2.0, -0.5, -0.5],  # mean -1.0
    "11": [-0.4, -0.6, -0.2],  # mean -0.4
}


@dataclass
class ScoringEngine(FakeEngine):
    """A fake engine that can also score a given answer (from `logprobs`); an answer in `too_long`
    raises as a context overflow does."""

    logprobs: dict[str, list[float]] = field(default_factory=lambda: dict(LOGPROBS))
    too_long: set[str] = field(default_factory=set)
    scored: list[tuple[list[dict[str, str]], str]] = field(default_factory=list)

    def answer_logprobs(self, messages: list[dict[str, str]], answer: str) -> list[float]:
        self.scored.append((messages, answer))
        if answer in self.too_long:
            raise ValueError("3000 tokens do not fit the scorer's context of 2048")
        return list(self.logprobs[answer])


def scoring_lm(**kwargs: Any) -> tuple[dspy.LM, ScoringEngine]:
    engine = ScoringEngine(**kwargs)
    return dspy.LM("fake/judge", engine=engine, async_engine=AsyncFakeEngine(engine), cache=False), engine


def judge(lm: dspy.LM, a: str, b: str, **options: Any) -> Any:
    with dspy.context(lm=lm):
        return build_program("chat", "likelihood", **options)(
            instruction=INSTRUCTION, response_a=a, response_b=b
        ).result


def test_p_a_is_the_sigmoid_of_the_mean_log_likelihood_difference() -> None:
    assert pair_p_a(-1.0, -1.0) == 0.5
    assert pair_p_a(-0.5, -2.5) == pytest.approx(1 / (1 + math.exp(-2.0)))  # 0.8808
    assert pair_p_a(-2.5, -0.5) == pytest.approx(1 / (1 + math.exp(2.0)))  # 0.1192
    # Any gap, without overflow: the side with the likelier text is all but certain.
    assert pair_p_a(0.0, -1000.0) == 1.0 and pair_p_a(-1000.0, 0.0) == 0.0
    pair = pair_likelihood(LOGPROBS["9"], LOGPROBS["7"])
    assert (pair.mean_a, pair.mean_b, pair.tokens_a, pair.tokens_b) == (-1.0, -0.15, 3, 2)
    assert pair.p_a == pytest.approx(1 / (1 + math.exp(0.85))) and pair.argmax == "B"


def test_the_judge_scores_both_responses_as_answers_and_records_verdict_probability_and_cost() -> None:
    lm, engine = scoring_lm()
    result = judge(lm, "9", "7")
    assert result.ok and result.method == "likelihood" and result.verdict == "B"
    # Nothing generated: two scoring passes, each the response as the answer to the instruction alone.
    assert engine.calls == []
    assert sorted(engine.scored, key=lambda s: s[1]) == [
        ([{"role": "user", "content": INSTRUCTION}], answer) for answer in ("7", "9")
    ]
    p_a = 1 / (1 + math.exp(0.85))  # sigmoid(-1.0 - (-0.15)) = 0.2994
    assert result.probabilities.p_a == pytest.approx(p_a) and result.probabilities.verdict == "B"
    assert result.probabilities.confidence == pytest.approx(1 - p_a)
    assert result.decision == "probability" and result.argmax.verdict == "B"
    assert result.details["likelihood"] == {
        "mean_a": -1.0,
        "mean_b": -0.15,
        "tokens_a": 3,
        "tokens_b": 2,
        "p_a": pytest.approx(p_a),
    }
    assert "response B more likely" in result.feedback and "A -1.00, B -0.15" in result.feedback
    usage = result.usage
    assert (usage.calls, usage.cached, usage.prompt_tokens, usage.completion_tokens) == (2, 0, 5, 0)
    assert usage.by_stage == {"likelihood": 2}
    # The record round-trips as every judge's does.
    assert type(result).from_dict(json.loads(json.dumps(result.to_dict()))).details == result.details


def test_a_with_the_higher_mean_wins_and_equal_means_are_a_tie() -> None:
    lm, _ = scoring_lm()
    assert judge(lm, "11", "9").verdict == "A"  # -0.4 against -1.0
    same = judge(lm, "7", "7")
    assert same.verdict == "tie" and same.argmax.verdict == "tie" and same.probabilities.p_a == 0.5


def test_the_tie_band_and_the_argmax_rule_apply_as_for_every_pairwise_judge() -> None:
    lm, _ = scoring_lm()
    # "11" against "7": p(A) = sigmoid(-0.4 + 0.15) = 0.4378, within 0.15 of 0.5.
    banded = judge(lm, "11", "7", tie_band=0.3)
    assert banded.probabilities.p_a == pytest.approx(1 / (1 + math.exp(0.25)))
    assert banded.verdict == "tie" and banded.argmax.verdict == "B"
    argmax = judge(lm, "11", "7", tie_band=0.3, decision="argmax")
    assert argmax.decision == "argmax" and argmax.verdict == "B"


def test_a_response_too_long_to_score_is_an_unparsed_outcome_with_its_reason() -> None:
    lm, _ = scoring_lm(too_long={"9"})
    result = judge(lm, "9", "7")
    assert result.status == "unparsed" and result.verdict is None and result.error_stage == "likelihood"
    assert (
        result.error == "response A could not be scored: 3000 tokens do not fit the scorer's context of 2048"
    )
    assert result.usage.calls == 2  # both passes were asked for
    lm, _ = scoring_lm(logprobs=LOGPROBS | {"8": []})
    empty = judge(lm, "7", "8")
    assert empty.status == "unparsed" and empty.error == "response B has no tokens to score"


def test_it_decides_every_pair_as_the_cejudge_tie_breaker_would() -> None:
    """The same rule as CE-Judge's likelihood tie-breaker, so `--method likelihood` isolates the stages."""
    _, engine = scoring_lm()
    lm, _ = scoring_lm()
    for a, b in [("9", "7"), ("11", "9"), ("7", "11")]:
        tie_breaker = likelihood_preference(engine.answer_logprobs, INSTRUCTION, a, b)
        result = judge(lm, a, b)
        assert result.verdict == tie_breaker.verdict
        assert result.probabilities.p_a == pytest.approx(tie_breaker.p_a, abs=1e-4)


def test_a_backbone_that_cannot_score_a_text_is_refused_naming_it() -> None:
    lm, _ = fake_lm()  # no answer_logprobs: an HTTP backbone, as far as the judge can tell
    with pytest.raises(BackboneError, match=r"--method likelihood needs a backbone .*; fake/judge cannot"):
        judge(lm, "9", "7")
    with pytest.raises(InputError, match=r"--lm: backbone 'simulated:0' cannot score a given text"):
        check_method_backbone("likelihood", "simulated:0")
    with pytest.raises(InputError, match=r"backbone 'openai/gpt-4o-mini' cannot score a given text"):
        check_method_backbone("likelihood", "openai/gpt-4o-mini")  # a hosted API: never probed
    check_method_backbone("likelihood", "embedded")  # local GGUF models can
    check_method_backbone("likelihood", "gguf:/models/x.gguf")
    # A server the user runs may (its probe tells on first use, and the judge refuses it then).
    check_method_backbone("likelihood", "openai/qwen", api_base="http://127.0.0.1:8080/v1")
    check_method_backbone("direct", "simulated:0")  # other methods need no scorer


def test_pointwise_tasks_are_refused_with_the_reason() -> None:
    with pytest.raises(TaskError, match="pairwise tasks only"):
        build_program("literary", "likelihood")
    assert "likelihood" in method_names()
    assert isinstance(build_program("chat", "likelihood"), LikelihoodPairwiseJudge)


def test_options_the_likelihood_judge_has_not_are_refused_or_recorded_as_none() -> None:
    spec = load_task("chat")
    with pytest.raises(InputError, match="--orders: --method likelihood scores each response on its own"):
        JudgeOptions(method="likelihood", orders="single").check(spec)
    identity = JudgeOptions(method="likelihood").identity(spec)
    assert identity["orders"] is None and identity["judgment"] is None and identity["tie_band"] == 0.0
    assert JudgeOptions(method="direct").identity(spec)["orders"] == "both"
    # No predictor, so the fingerprint is the task declaration alone; it is stable.
    assert prompt_fingerprint(build_program("chat", "likelihood")) == prompt_fingerprint(
        build_program("chat", "likelihood")
    )


def test_the_cli_refuses_a_backbone_that_cannot_score_before_writing_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["judge", "--method", "likelihood", "--lm", "simulated:0", "--instruction", INSTRUCTION]
    assert main([*argv, "--response-a", "9", "--response-b", "7"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("error: --lm: backbone 'simulated:0' cannot score a given text")
        and len(err.strip().splitlines()) == 1
    )
    data = _pairs(tmp_path)
    out = tmp_path / "run"
    assert main(_evaluate_argv(data, out, "simulated:0")) == 2
    assert "cannot score a given text" in capsys.readouterr().err and not out.exists()


def _pairs(tmp_path: Path) -> Path:
    rows = [
        {
            "id": "prime-9-7",
            "language": "en",
            "prompt": INSTRUCTION,
            "response_a": "9",
            "response_b": "7",
            "label": "B",
        },
        {
            "id": "prime-11-9",
            "language": "en",
            "prompt": INSTRUCTION,
            "response_a": "11",
            "response_b": "9",
            "label": "A",
        },
        {
            "id": "prime-7-11",
            "language": "en",
            "prompt": INSTRUCTION,
            "response_a": "7",
            "response_b": "11",
            "label": "B",
        },
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _evaluate_argv(data: Path, out: Path, lm: str, task: str = "chat") -> list[str]:
    argv = ["evaluate", "--task", task, "--data", str(data), "--field", "id=id", "--out", str(out)]
    return [*argv, "--method", "likelihood", "--lm", lm, "--bootstrap", "0"]


def test_evaluate_writes_likelihood_records_on_a_scoring_backbone_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lm, engine = scoring_lm()
    monkeypatch.setattr(backbones, "make_lm", lambda spec, **kw: lm)
    data, out = _pairs(tmp_path), tmp_path / "run"
    argv = _evaluate_argv(data, out, "gguf:/models/fake.gguf")  # a local spec: one that can score
    assert main(argv) == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    by_id = {r["id"]: r for r in records}
    assert {r["method"] for r in records} == {"likelihood"} and {r["status"] for r in records} == {"ok"}
    # 9 vs 7: B; 11 vs 9: A; 7 vs 11: A (-0.15 against -0.4), against a gold B.
    assert {i: r["result"]["verdict"] for i, r in by_id.items()} == {
        "prime-9-7": "B",
        "prime-11-9": "A",
        "prime-7-11": "A",
    }
    assert by_id["prime-11-9"]["result"]["probabilities"]["p_a"] == pytest.approx(1 / (1 + math.exp(-0.6)))
    # Three responses to one instruction: each scored once, every other pair it enters reuses its figures.
    usages = [r["result"]["usage"] for r in records]
    assert all(u["calls"] + u["reused"] == 2 for u in usages), usages
    assert sum(u["calls"] for u in usages) == 3 and sum(u["reused"] for u in usages) == 3
    run = json.loads((out / "run.json").read_text())
    assert run["method"] == "likelihood" and run["orders"] is None and run["program"] == "base"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overall"]["name"] == "accuracy" and summary["overall"]["value"] == pytest.approx(2 / 3)
    scored = len(engine.scored)
    assert scored == 3
    capsys.readouterr()
    # A rerun of the same command judges nothing again and leaves the records as they were.
    assert main(argv) == 0
    assert "3 already in" in capsys.readouterr().err and len(engine.scored) == scored
    assert [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()] == records
    # A pointwise task is refused before a run directory opens.
    literary = tmp_path / "literary-run"
    assert main(_evaluate_argv(data, literary, "gguf:/models/fake.gguf", task="literary")) == 2
    assert "pairwise tasks only" in capsys.readouterr().err and not literary.exists()


def test_cejudge_judge_shows_the_likelihoods_and_no_presentation_order(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lm, _ = scoring_lm()
    monkeypatch.setattr(backbones, "make_lm", lambda spec, **kw: lm)
    argv = ["judge", "--method", "likelihood", "--lm", "gguf:/models/fake.gguf", "--instruction", INSTRUCTION]
    assert main([*argv, "--response-a", "9", "--response-b", "7"]) == 0
    # The panel's text, its borders and line breaks taken out.
    shown = " ".join(capsys.readouterr().out.translate(str.maketrans("", "", "│╭╮╰╯─")).split())
    assert 'Verdict: B ("7") is better' in shown and "no presentation order was involved" in shown
    assert "-1.00 - -0.15" in shown and "--orders both" not in shown


def test_each_response_is_scored_once_per_instruction_and_backbone() -> None:
    """A response's figures do not depend on the response it meets: one program scores each (instruction,
    response) once, and the pairs it enters later record it as reused, with no call and no tokens."""
    lm, engine = scoring_lm()
    program = build_program("chat", "likelihood")
    with dspy.context(lm=lm):
        first = program(instruction=INSTRUCTION, response_a="9", response_b="7").result
        second = program(instruction=INSTRUCTION, response_a="7", response_b="11").result
        other = program(instruction="Name an odd number.", response_a="7", response_b="9").result
    # Both texts of a pair are scored side by side, in either order.
    assert sorted(answer for _, answer in engine.scored) == ["11", "7", "7", "9", "9"]
    assert (first.usage.calls, first.usage.reused, first.usage.prompt_tokens) == (2, 0, 5)
    assert (second.usage.calls, second.usage.reused, second.usage.prompt_tokens) == (1, 1, 3)
    assert second.usage.by_stage == {"likelihood": 1}
    assert (other.usage.calls, other.usage.reused) == (2, 0)  # another instruction: scored afresh
    # Reuse changes no figure: the second pair's p(A) is what a fresh program gives it.
    fresh = judge(scoring_lm()[0], "7", "11")
    assert second.probabilities.p_a == fresh.probabilities.p_a and second.verdict == fresh.verdict == "A"
    # Another backbone is another key: nothing is reused across LMs.
    lm2, engine2 = scoring_lm()
    with dspy.context(lm=lm2):
        again = program(instruction=INSTRUCTION, response_a="9", response_b="7").result
    assert (again.usage.calls, again.usage.reused) == (2, 0) and len(engine2.scored) == 2
