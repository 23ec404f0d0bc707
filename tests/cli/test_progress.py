"""Progress while a judgment runs: the callback's events, their counts, and the INFO log."""

from __future__ import annotations

import json
import logging

import dspy
import pytest

from cejudge_dspy import PairwiseJudge, PointwiseJudge, StageProgress, on_progress
from cejudge_dspy.judges import DirectPairwiseJudge
from cejudge_dspy.judges.checkeval import CheckEvalJudge
from cejudge_dspy.usage import clock
from tests.support.fakes import fake_lm


def judged(program: dspy.Module, **inputs: str) -> tuple[list[StageProgress], dspy.Prediction]:
    lm, _ = fake_lm()
    events: list[StageProgress] = []
    with dspy.context(lm=lm), on_progress(events.append):
        pred = program(**inputs)
    return events, pred


PAIR = {"instruction": "Name a prime.", "response_a": "9", "response_b": "7"}


@pytest.mark.parametrize(
    ("language", "orders", "calls"),
    [("en", "both", 11), ("de", "both", 14), ("en", "single", 10), ("de", "single", 13)],
)
def test_pairwise_progress_reaches_the_expected_total(language: str, orders: str, calls: int) -> None:
    """The fake grades both responses alike, so the pairwise judgment breaks the tie: the calls it adds
    are announced when the grades are in, and the count still ends at the total."""
    events, pred = judged(PairwiseJudge("chat", orders=orders), **PAIR, language=language)
    done = [e for e in events if e.event == "done"]
    assert pred.usage.calls == calls
    assert [e.calls_done for e in done] == list(range(1, calls + 1))  # one call per stage, counted once
    assert done[-1].calls_expected == calls and done[-1].running == ()
    assert all(e.calls_done <= e.calls_expected for e in events)
    assert len([e for e in events if e.event == "start"]) == calls


def test_grades_that_separate_need_no_pairwise_judgment_and_the_count_says_so() -> None:
    rules = {"grade": lambda i: {"fulfils": "yes" if i["response"] == "7" else "no", "feedback": "fb"}}
    lm, _ = fake_lm(rules)
    events: list[StageProgress] = []
    with dspy.context(lm=lm), on_progress(events.append):
        pred = PairwiseJudge("chat")(**PAIR, language="en")
    done = [e for e in events if e.event == "done"]
    assert pred.verdict == "B" and pred.orders == [] and pred.decided_by["argmax"] == "grades"
    assert pred.usage.calls == 9 and done[-1].calls_done == done[-1].calls_expected == 9
    assert "VerdictJudgment" not in {e.stage for e in events}


def test_events_name_the_stage_and_what_it_works_on() -> None:
    events, _ = judged(PairwiseJudge("chat"), **PAIR, language="de")
    steps = {e.step for e in events}
    assert {
        "concepts (instruction)",
        "concepts (A)",
        "concepts (B)",
        "translation to English (instruction)",
        "translation to English (B)",
        "checklist response→instruction (A)",
        "checklist instruction→response (B)",
        "verdict (A shown first)",
        "verdict (B shown first)",
        "grade (A)",
        "grade (B)",
    } <= steps
    stages = {e.stage for e in events}
    assert stages == {
        "Concepts",
        "Translate",
        "ChecklistFromResponse",
        "ChecklistFromInstruction",
        "GradeJudgment",
        "VerdictJudgment",
    }
    last = [e for e in events if e.event == "done"][-1]
    assert last.describe().startswith(f"{last.step} · 14/14 calls · 0:0")


def test_shared_work_from_an_earlier_item_lowers_the_expectation() -> None:
    """The instruction's concepts are reused by the next item with the same instruction: 8 calls, not 9."""
    judge = PairwiseJudge("chat")
    lm, _ = fake_lm()
    events: list[StageProgress] = []
    with dspy.context(lm=lm):
        judge(**PAIR, language="en")
        with on_progress(events.append):
            pred = judge(instruction=PAIR["instruction"], response_a="11", response_b="4", language="en")
    done = [e for e in events if e.event == "done"]
    assert pred.usage.calls == 10 and done[-1].calls_done == done[-1].calls_expected == 10


@pytest.mark.parametrize(
    ("program", "inputs", "calls"),
    [
        (
            PointwiseJudge("literary"),
            {"instruction": "Der Hund.", "response": "The dog.", "language": "de", "response_language": "en"},
            6,  # into English the reference is stage 2's translation: one call, expected once
        ),
        (DirectPairwiseJudge("chat"), {**PAIR, "language": "en"}, 2),
    ],
)
def test_other_judges_report_their_totals(program: dspy.Module, inputs: dict[str, str], calls: int) -> None:
    events, pred = judged(program, **inputs)
    done = [e for e in events if e.event == "done"]
    assert pred.usage.calls == calls == done[-1].calls_done == done[-1].calls_expected


def test_checkeval_reports_one_call_per_subdimension() -> None:
    judge = CheckEvalJudge("summeval")
    groups = judge.checklist.groups()

    def answers(inputs: dict[str, str]) -> dict[str, list[str]]:
        return {"answers": ["yes"] * inputs["questions"].count('"')}

    lm, _ = fake_lm({"answer": answers})
    events: list[StageProgress] = []
    with dspy.context(lm=lm), on_progress(events.append):
        judge(instruction="An article.", response="A summary.")
    done = [e for e in events if e.event == "done"]
    assert done[-1].calls_expected == len(groups) == done[-1].calls_done
    assert {e.which for e in done} == {f"{d}/{s}" for d, s, _ in groups}


def test_progress_is_logged_at_info_without_a_callback(caplog: pytest.LogCaptureFixture) -> None:
    lm, _ = fake_lm()
    with caplog.at_level(logging.INFO, logger="cejudge_dspy"), dspy.context(lm=lm):
        PairwiseJudge("chat")(**PAIR, language="en")
    lines = [r.getMessage() for r in caplog.records if r.name == "cejudge_dspy.usage._progress"]
    assert len(lines) == 11 and lines[-1].startswith("verdict (") and " · 11/11 calls · " in lines[-1]


def test_a_failing_callback_does_not_lose_the_judgment() -> None:
    def broken(event: StageProgress) -> None:
        raise RuntimeError("display bug")

    lm, _ = fake_lm()
    with dspy.context(lm=lm), on_progress(broken):
        pred = PairwiseJudge("chat")(**PAIR, language="en")
    assert pred.result.ok


@pytest.mark.parametrize(("seconds", "shown"), [(0, "0:00"), (72.9, "1:12"), (3723, "1:02:03")])
def test_clock(seconds: float, shown: str) -> None:
    assert clock(seconds) == shown


def event(done: int, expected: int, running: tuple[str, ...] = ("verdict (A shown first)",)) -> StageProgress:
    return StageProgress("done", "VerdictJudgment", "verdict", "A shown first", done, expected, 12.0, running)


def test_run_display_counts_progress_inside_items_toward_eta_and_rate() -> None:
    from cejudge_dspy.cli._progress import RunDisplay

    display = RunDisplay("chat · cejudge", total=4)
    start = display.counts.started
    display.on_record("x1", "ok")
    display.on_stage("x2", event(5, 10))  # half of the second item
    assert display.progress() == 1.5
    line = display.summary(now=start + 30)  # 1.5 items in 30 s: 20 s/item, 2.5 items to go
    assert line == "1/4 items · 0:30 · ETA 0:50 · 20 s/item · unparsed 0 · errors 0"
    display.on_record("x2", "unparsed")
    assert "x2" not in display.items and "unparsed 1" in display.summary(now=start + 31)


def test_run_display_before_any_progress_says_so() -> None:
    from cejudge_dspy.cli._progress import RunDisplay

    display = RunDisplay("chat · cejudge", total=2)
    assert (
        display.summary(now=display.counts.started + 5)
        == "0/2 items · 0:05 · rate: measuring · unparsed 0 · errors 0"
    )


def test_item_line_names_the_oldest_call_in_flight() -> None:
    from cejudge_dspy.cli._progress import ItemState

    state = ItemState(started=0.0)
    state.update(event(6, 10, ("checklist response→instruction (B)", "checklist instruction→response (B)")))
    now = state.started + 72
    assert state.describe(now) == "checklist response→instruction (B) +1 more · 6/10 calls · 1:12"


def test_evaluate_reports_stage_progress_per_item(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object, shared_data: object
) -> None:
    from cejudge_dspy.backbones import _spec as backbones
    from cejudge_dspy.cli import _progress as progress
    from cejudge_dspy.cli import main

    lm, _ = fake_lm()
    monkeypatch.setattr(backbones, "make_lm", lambda spec, **kw: lm)
    seen: dict[str, list[int]] = {}
    original = progress.RunDisplay.on_stage

    def spy(self: progress.RunDisplay, item_id: str, e: StageProgress) -> None:
        seen.setdefault(item_id, []).append(e.calls_done)
        original(self, item_id, e)

    monkeypatch.setattr(progress.RunDisplay, "on_stage", spy)
    data = f"{shared_data}/pairwise_en_dev.jsonl"
    argv = [
        "evaluate",
        "--task",
        "chat",
        "--data",
        data,
        "--limit",
        "3",
        "--out",
        f"{tmp_path}/run",
        "--concurrency",
        "3",
    ]
    assert main(argv) == 0
    ids = [json.loads(line)["id"] for line in open(f"{tmp_path}/run/results.jsonl", encoding="utf-8")]
    assert sorted(seen) == sorted(ids) and all(max(v) >= 8 for v in seen.values())
