"""`--method geval`: one Likert call per CheckEval dimension, scored by the expectation over the scale's
levels at the score token (the argmax kept beside it), on a fake engine with hand-set logprobs."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import dspy
import pytest

from cejudge_dspy.backbones import _spec as backbones
from cejudge_dspy.cli import main
from cejudge_dspy.errors import TaskError
from cejudge_dspy.judges import GEvalJudge, build_program, method_names
from cejudge_dspy.judges.geval._judge import likert_scale
from cejudge_dspy.judges.verdicts import JudgeResult
from cejudge_dspy.tasks import load_task
from tests.support.fakes import fake_lm, scripted_logprobs

DIMS = ("coherence", "consistency", "fluency", "relevance")
# dimension -> (argmax level, {level token: probability}); relevance leaves 0.2 on a non-level token.
AT = {
    "coherence": (4, {" 4": 0.6, " 3": 0.4}),  # 3.6
    "consistency": (5, {" 5": 0.8, " 4": 0.2}),  # 4.8
    "fluency": (3, {" 3": 0.5, " 2": 0.3, " 1": 0.2}),  # 1.5 + 0.6 + 0.2 = 2.3
    "relevance": (2, {" 2": 0.7, " 1": 0.1, " so": 0.2}),  # over 1/2 only: 2 * 0.875 + 1 * 0.125
}
EXPECTED = {"coherence": 3.6, "consistency": 4.8, "fluency": 2.3, "relevance": 1.875}


def rate(inputs: dict[str, str]) -> dict[str, int]:
    return {"score": AT[inputs["dimension"]][0]}


def logprobs(stage: str, inputs: dict[str, str], text: str) -> list[dict] | None:
    alts = AT[inputs["dimension"]][1]
    # JSON: `{"score": 4}`; chat: `[[ ## score ## ]]\n4` (no space before the digit there).
    at = {'"score":': alts, "## score ## ]]": {"\n" + k.strip(): p for k, p in alts.items()}}
    return scripted_logprobs(text, at)


def judge(adapter: dspy.Adapter, **engine_options: object) -> tuple[JudgeResult, object]:
    lm, engine = fake_lm({"score": rate}, **engine_options)
    with dspy.context(lm=lm, adapter=adapter):
        pred = GEvalJudge("summeval")(instruction="The article.", response="The summary.")
    return pred.result, engine


@pytest.mark.parametrize("adapter", [dspy.JSONAdapter(), dspy.ChatAdapter()], ids=["json", "chat"])
def test_expected_score_per_dimension_by_hand(adapter: dspy.Adapter) -> None:
    result, engine = judge(adapter, logprobs=logprobs)
    calls = engine.stage_calls("score")  # type: ignore[attr-defined]
    assert sorted(c.inputs["dimension"] for c in calls) == sorted(DIMS)  # one call per dimension
    assert result.ok and result.method == "geval" and result.decision == "probability"
    assert result.dimension_scores == pytest.approx(EXPECTED)
    assert result.score == pytest.approx(sum(EXPECTED.values()) / 4)  # 3.14375
    assert result.argmax.dimension_scores == {d: AT[d][0] for d in DIMS}
    assert result.argmax.score == pytest.approx((4 + 5 + 3 + 2) / 4)
    rows = result.details["dimensions"]
    assert rows["relevance"]["distribution"]["2"] == pytest.approx(0.875)
    assert rows["fluency"]["distribution"] == pytest.approx(
        {"1": 0.2, "2": 0.3, "3": 0.5, "4": 0.0, "5": 0.0}
    )
    assert result.usage.calls == 4
    # Both rules from one record; the record survives JSON.
    back = JudgeResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert back.under("argmax").dimension_scores == {d: AT[d][0] for d in DIMS}
    assert back.under("probability").dimension_scores == pytest.approx(EXPECTED)


def test_the_prompt_names_the_dimension_its_aspects_and_a_scale_described_for_it() -> None:
    _, engine = judge(dspy.JSONAdapter(), logprobs=logprobs)
    call = next(c for c in engine.stage_calls("score") if c.inputs["dimension"] == "fluency")  # type: ignore[attr-defined]
    assert "individual sentences" in call.inputs["dimension_definition"]
    assert "grammar and spelling" in call.inputs["aspects"]
    assert "Excellent fluency" in call.inputs["scale"] and "Very poor fluency" in call.inputs["scale"]
    assert "article" in call.inputs["instruction"].lower()
    spec = load_task("summeval")
    assert sorted(likert_scale(spec, spec.dimensions[0])) == [1, 2, 3, 4, 5]


def test_a_dimension_whose_score_token_is_missing_keeps_its_argmax_and_says_why() -> None:
    def hide_fluency(stage: str, inputs: dict[str, str], text: str) -> list[dict] | None:
        if inputs["dimension"] == "fluency":
            return scripted_logprobs(text.replace("score", "level"))
        return logprobs(stage, inputs, text)

    result, _ = judge(dspy.JSONAdapter(), logprobs=hide_fluency)
    assert result.probabilities.status == "ok" and "fluency" in result.probabilities.reason
    assert result.dimension_scores["fluency"] == 3 and result.dimension_scores["coherence"] == pytest.approx(
        3.6
    )
    assert result.score == pytest.approx((3.6 + 4.8 + 3 + 1.875) / 4)
    assert result.details["dimensions"]["fluency"]["probabilities"] == "not_located"


def test_a_backbone_without_logprobs_scores_by_the_argmax(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="cejudge_dspy"):
        result, _ = judge(dspy.JSONAdapter())
    assert result.probabilities.status == "unavailable" and result.decision == "argmax"
    assert result.dimension_scores == {d: AT[d][0] for d in DIMS} and result.score == pytest.approx(3.5)
    assert any("returns no token probabilities" in r.getMessage() for r in caplog.records)


def test_a_failed_dimension_is_recorded_and_leaves_no_overall_score() -> None:
    def out_of_scale(inputs: dict[str, str]) -> dict[str, int]:
        return {"score": 9} if inputs["dimension"] == "fluency" else rate(inputs)

    lm, engine = fake_lm({"score": out_of_scale}, logprobs=logprobs)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = GEvalJudge("summeval")(instruction="a", response="s").result
    assert result.ok and set(result.dimension_scores) == {"coherence", "consistency", "relevance"}
    assert "not a level of the scale" in result.details["failures"]["fluency"]
    assert result.score is None  # a mean over three of four dimensions is another scale
    lm, _ = fake_lm({"score": lambda i: {"score": 0}})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = GEvalJudge("summeval")(instruction="a", response="s").result
    assert result.status == "unparsed" and result.error_stage == "Rate"
    assert set(result.details["failures"]) == set(DIMS)


def test_registered_and_refused_for_a_task_without_dimensions() -> None:
    assert "geval" in method_names()
    assert isinstance(build_program("summeval", "geval"), GEvalJudge)
    with pytest.raises(TaskError, match="declares no"):
        build_program("literary", "geval")


def test_evaluate_summeval_geval_writes_the_per_dimension_tables(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The argmax gives every summary coherence 4 (a constant: no correlation); the expected scores rank
    the three summaries as the humans do (Spearman 1)."""
    expected = {"S1": 3.2, "S2": 3.6, "S3": 3.9}  # P(4) = 0.2, 0.6, 0.9 against P(3)

    def by_summary(stage: str, inputs: dict[str, str], text: str) -> list[dict] | None:
        p4 = round(expected[inputs["response"]] - 3, 6)
        alts = {" 4": p4, " 3": 1 - p4}
        return scripted_logprobs(text, {'"score":': alts, "## score ## ]]": {"\n4": p4, "\n3": 1 - p4}})

    lm, _ = fake_lm({"score": lambda i: {"score": 4}}, logprobs=by_summary)
    monkeypatch.setattr(backbones, "make_lm", lambda spec, **kw: lm)
    data = tmp_path / "summeval.jsonl"
    rows = [
        {
            "doc_id": "d1",
            "system_id": s,
            "source": "An article.",
            "system_output": s,
            "scores": dict.fromkeys(DIMS, h),
        }
        for s, h in (("S1", 1.0), ("S2", 2.0), ("S3", 3.0))
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    monkeypatch.setenv("COLUMNS", "300")
    argv = ["evaluate", "--task", "summeval", "--method", "geval", "--data", str(data), "--out", str(out)]
    assert main([*argv, "--bootstrap", "0"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    coherence = summary["dimensions"]["coherence"]
    assert coherence["n"] == 3 and coherence["spearman"]["value"] == pytest.approx(1.0)
    assert summary["constant_dimensions"] == []
    rules = summary["decision_rules"]
    assert rules["decided_by"] == {"argmax": 0, "probability": 3}
    assert "constant x" in rules["argmax"]["dimensions"]["coherence"]["spearman"]["reason"]
    assert rules["argmax"]["constant_dimensions"] == sorted(DIMS)
    assert json.loads((out / "run.json").read_text())["method"] == "geval"
    printed = capsys.readouterr().out
    assert "Correlation with humans per dimension" in printed and "coherence" in printed
    argmax_row = next(line for line in printed.splitlines() if line.startswith("│ argmax"))
    assert "coherence, consistency, fluency, relevance" in argmax_row  # the constant dimensions


def test_judge_panel_shows_the_expected_scores_and_the_argmax_levels(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lm, _ = fake_lm({"score": rate}, logprobs=logprobs)
    monkeypatch.setattr(backbones, "make_lm", lambda spec, **kw: lm)
    monkeypatch.setenv("COLUMNS", "400")  # one panel line per text line
    argv = ["judge", "--task", "summeval", "--method", "geval", "--instruction", "a", "--response", "s"]
    assert main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Score: 3.144 / 5 (mean over the dimensions)" in out
    assert "expected score per dimension coherence 3.60, consistency 4.80" in out
    assert "argmax levels coherence 4, consistency 5, fluency 3, relevance 2; decided by probability" in out


def test_compare_geval_with_checkeval_per_dimension(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from cejudge_dspy.data import Item
    from cejudge_dspy.metrics import compare_runs
    from cejudge_dspy.runs import Record
    from tests.support.view_runs import write_run

    humans = [1.0, 2.0, 3.0, 4.0]

    def run(name: str, method: str, coherence: list[float]) -> Path:
        records = []
        for n, (h, c) in enumerate(zip(humans, coherence, strict=True)):
            dims = {"coherence": c, "consistency": c, "fluency": 1.0, "relevance": c}
            result = JudgeResult(mode="pointwise", status="ok", method=method, score=c, dimension_scores=dims)
            item = Item(
                id=f"s{n}", mode="pointwise", instruction="doc", response="sum", label=dict.fromkeys(DIMS, h)
            )
            records.append(Record(f"s{n}", "summeval", method, "ok", item, result))
        return write_run(tmp_path / name, {"task": "summeval", "method": method, "lm": "fake"}, records)

    geval, checkeval = run("g", "geval", [1.2, 2.5, 3.1, 4.8]), run("c", "checkeval", [0.9, 0.6, 0.5, 0.1])
    cmp = compare_runs(geval, checkeval, n_resamples=50)
    rows = {r["language"]: r for r in cmp["rows"]}
    assert cmp["by"] == "dimension" and list(rows) == [*DIMS, "overall"]
    assert rows["coherence"]["a"]["value"] == pytest.approx(1.0) and rows["coherence"]["b"][
        "value"
    ] == pytest.approx(-1.0)
    assert rows["coherence"]["agreement"]["value"] == pytest.approx(-1.0)  # Kendall tau between the runs
    assert "constant" in rows["fluency"]["a"]["reason"]
    assert rows["overall"]["n"] == 4 and rows["overall"]["a"]["value"] == pytest.approx(1.0)
    monkeypatch.setenv("COLUMNS", "300")
    assert main(["compare", str(geval), str(checkeval)]) == 0
    out = capsys.readouterr().out
    assert "dimension" in out and "A = geval (fake, argmax rule) vs B = checkeval (fake, argmax rule)" in out
