"""`cejudge evaluate`'s engine: records written as they come, resume, summaries, unparsed accounting."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import dspy
import pytest

from cejudge_dspy.data import Item
from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.evaluate import judge_items
from cejudge_dspy.judges.cejudge import PairwiseJudge
from cejudge_dspy.metrics import summarize
from cejudge_dspy.runs import RESULTS, pending_items, prepare_run_dir, read_records
from cejudge_dspy.tasks import load_task
from tests.support.fakes import fake_lm


def items() -> list[Item]:
    # The judge below prefers the response containing "good"; golds make two of four right in "de".
    rows = [
        ("1", "de", "good", "bad", "A"),
        ("2", "de", "bad", "good", "A"),
        ("3", "fr", "bad", "good", "B"),
        ("4", "fr", "good", "bad", "A"),
        ("5", "de", "good", "bad", "A"),
        ("6", "de", "bad", "good", "A"),
    ]
    return [
        Item(id=i, mode="pairwise", instruction=f"q{i}", response_a=a, response_b=b, language=lang, label=lab)
        for i, lang, a, b, lab in rows
    ]


def prefer_good(inputs: dict[str, str]) -> dict[str, object] | str:
    if inputs["instruction"] == "q4":
        return "unparseable rambling"  # item 4 can never be parsed
    return {"answers": [], "feedback": "f", "verdict": "A" if "good" in inputs["response_a"] else "B"}


def evaluate(out: Path, todo: list[Item], lm: dspy.LM, program: dspy.Module | None = None) -> None:
    program = program or PairwiseJudge("chat")
    with dspy.context(lm=lm):
        asyncio.run(judge_items(todo, program, out / RESULTS, task="chat", method="cejudge", concurrency=2))


def test_records_summary_and_unparsed_accounting(tmp_path: Path) -> None:
    lm, _ = fake_lm({"verdict": prefer_good})
    prepare_run_dir(tmp_path, {"task": "chat", "method": "cejudge"})
    evaluate(tmp_path, items(), lm)
    records = read_records(tmp_path / RESULTS)
    assert sorted(r.id for r in records) == ["1", "2", "3", "4", "5", "6"]
    by_id = {r.id: r for r in records}
    assert by_id["4"].status == "unparsed" and by_id["4"].result.verdict is None
    assert by_id["1"].result.verdict == "A" and by_id["1"].result.consistent is True
    summary = summarize(records, load_task("chat"), n_resamples=0)
    # de: items 1,2,5,6 -> verdicts A,B,A,B vs gold A,A,A,A = 2/4; fr: item 3 right, item 4 unparsed.
    assert summary["per_language"]["de"]["value"] == pytest.approx(0.5)
    assert summary["per_language"]["fr"]["value"] == pytest.approx(1.0)
    assert summary["per_language"]["fr"]["n_excluded"] == 1
    assert summary["average"] == pytest.approx(0.75)
    assert summary["n_unparsed"] == 1 and summary["n_ok"] == 5
    assert summary["position_consistency"]["value"] == pytest.approx(1.0)
    assert summary["usage"]["calls_per_item"] > 0


def test_interrupted_run_resumes_without_rejudging_or_losing_items(tmp_path: Path) -> None:
    lm, engine = fake_lm({"verdict": prefer_good})
    prepare_run_dir(tmp_path, {"task": "chat", "method": "cejudge"})
    judge = PairwiseJudge("chat")
    calls = {"n": 0}

    class Killed(BaseException):
        """The process dies while the third item is in flight (Ctrl-C, OOM kill, power loss)."""

    class Interrupting(dspy.Module):
        async def acall(self, **kwargs: str) -> dspy.Prediction:
            calls["n"] += 1
            if calls["n"] == 3:
                raise Killed
            return await judge.acall(**kwargs)

    with pytest.raises(Killed), dspy.context(lm=lm):
        asyncio.run(judge_items(items(), Interrupting(), tmp_path / RESULTS, task="chat", method="cejudge"))
    done = read_records(tmp_path / RESULTS)
    assert [r.id for r in done] == ["1", "2"]
    # A torn line from a kill mid-write is ignored on resume.
    with (tmp_path / RESULTS).open("a") as fh:
        fh.write('{"id": "3", "task"')
    records = prepare_run_dir(tmp_path, {"task": "chat", "method": "cejudge"})
    todo = pending_items(items(), records)
    assert [i.id for i in todo] == ["3", "4", "5", "6"]
    before = len(engine.calls)
    (tmp_path / RESULTS).write_text("".join(json.dumps(r.to_dict()) + "\n" for r in records))
    evaluate(tmp_path, todo, lm, judge)
    judged = [c.inputs["instruction"] for c in engine.calls[before:] if c.stage == "verdict"]
    assert sorted(set(judged)) == ["q3", "q4", "q5", "q6"]
    assert sorted(r.id for r in read_records(tmp_path / RESULTS)) == ["1", "2", "3", "4", "5", "6"]


def test_errors_are_recorded_and_retried_but_unparsed_are_final(tmp_path: Path) -> None:
    def boom(inputs: dict[str, str]) -> dict[str, object]:
        if inputs["instruction"] == "q2":
            raise RuntimeError("engine exploded")
        return prefer_good(inputs)  # type: ignore[return-value]

    lm, _ = fake_lm({"verdict": boom})
    prepare_run_dir(tmp_path, {"task": "chat", "method": "cejudge"})
    evaluate(tmp_path, items()[:4], lm)
    records = {r.id: r for r in read_records(tmp_path / RESULTS)}
    assert records["2"].status == "error" and "exploded" in records["2"].error
    assert [i.id for i in pending_items(items()[:4], list(records.values()))] == ["2"]


def test_a_run_directory_refuses_other_settings(tmp_path: Path) -> None:
    lm, _ = fake_lm({"verdict": prefer_good})
    prepare_run_dir(tmp_path, {"task": "chat", "method": "cejudge", "lm": "embedded"})
    evaluate(tmp_path, items()[:1], lm)
    with pytest.raises(CEJudgeError, match="other settings.*method"):
        prepare_run_dir(tmp_path, {"task": "chat", "method": "direct", "lm": "embedded"})


def test_a_run_directory_without_records_takes_the_corrected_settings(tmp_path: Path) -> None:
    # A run that stopped before its first record (a typo found late) holds nothing that could mix.
    prepare_run_dir(tmp_path, {"task": "chat", "method": "directt"})
    assert prepare_run_dir(tmp_path, {"task": "chat", "method": "direct"}) == []
    assert json.loads((tmp_path / "run.json").read_text())["method"] == "direct"


def test_concurrency_must_be_positive(tmp_path: Path) -> None:
    lm, _ = fake_lm()
    with pytest.raises(CEJudgeError, match="at least 1"), dspy.context(lm=lm):
        asyncio.run(
            judge_items(
                items(),
                PairwiseJudge("chat"),
                tmp_path / RESULTS,
                task="chat",
                method="cejudge",
                concurrency=0,
            )
        )


def test_runs_recorded_before_run_identity_are_refused_with_a_clear_line(tmp_path: Path) -> None:
    # run.json of older versions lacks temperature, max_tokens and the data fingerprint.
    (tmp_path / "run.json").write_text(json.dumps({"task": "chat", "method": "cejudge", "program": "auto"}))
    (tmp_path / RESULTS).write_text(json.dumps({"id": "1", "task": "chat"}) + "\n")
    with pytest.raises(CEJudgeError, match="older cejudge.*--force-new"):
        prepare_run_dir(tmp_path, {"task": "chat", "method": "cejudge", "program": "base"})
    assert prepare_run_dir(tmp_path, {"task": "chat", "method": "cejudge"}, force_new=True) == []
    assert len(list(tmp_path.glob("superseded-*/results.jsonl"))) == 1


def test_records_without_run_json_are_refused_not_adopted(tmp_path: Path) -> None:
    # Deleting run.json must not let a resume adopt records judged with unknown settings.
    (tmp_path / RESULTS).write_text(json.dumps({"id": "1"}) + "\n")
    with pytest.raises(CEJudgeError, match="no run.json"):
        prepare_run_dir(tmp_path, {"task": "chat", "method": "cejudge"})


def test_run_timing_keeps_the_first_start_and_sums_the_sessions() -> None:
    from cejudge_dspy.runs import run_timing

    first = run_timing(None, 0.0, 90.5)
    assert first == {
        "started": "1970-01-01T00:00:00+00:00",
        "finished": "1970-01-01T00:01:30+00:00",
        "wall_seconds": 90.5,
        "sessions": 1,
    }
    second = run_timing(first, 3600.0, 3610.0)
    assert (
        second["started"] == "1970-01-01T00:00:00+00:00" and second["finished"] == "1970-01-01T01:00:10+00:00"
    )
    assert second["wall_seconds"] == 100.5 and second["sessions"] == 2
    assert run_timing({"garbage": 1}, 0.0, 1.0)["sessions"] == 1
