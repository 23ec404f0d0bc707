"""Cost that stays flat over a long run, counted, never timed (issue 14).

A run's per-call cost grew with the run because DSPy kept every call in the history of every module on
the stack and code walked those lists. These tests count what made it grow: history entries, memo sizes.
"""

from __future__ import annotations

import asyncio
import gc
from dataclasses import replace
from pathlib import Path

import dspy
import pytest
from dspy.clients import base_lm

from cejudge_dspy.backbones import simulated_backbone
from cejudge_dspy.data import Item
from cejudge_dspy.evaluate import judge_items
from cejudge_dspy.judges import keep_history
from cejudge_dspy.judges._machinery._judging_run import RUN_GC_THRESHOLD
from cejudge_dspy.judges.cejudge import PairwiseJudge
from cejudge_dspy.runs import RESULTS

INSTANT = {"base_latency": 0.0, "per_prompt_token": 0.0, "per_output_token": 0.0}


def items(n: int) -> list[Item]:
    return [
        Item(
            id=f"i{k}",
            mode="pairwise",
            instruction=f"Frage {k}: warum?",
            response_a=f"Antwort A{k}.",
            response_b=f"Antwort B{k}.",
            language="de",
            label="A",
        )
        for k in range(n)
    ]


def histories(program: dspy.Module, lm: dspy.LM) -> int:
    """Entries held in the LM's and every module's history (what used to grow without bound)."""
    modules = [program, *(m for _, m in program.named_sub_modules())]
    return len(lm.history) + sum(len(getattr(m, "history", [])) for m in modules)


def run(program: dspy.Module, lm: dspy.LM, out: Path, n: int) -> None:
    with dspy.context(lm=lm):
        asyncio.run(judge_items(items(n), program, out / RESULTS, task="chat", method="m", concurrency=4))


def test_a_judging_run_keeps_no_dspy_history(tmp_path: Path) -> None:
    lm, engine = simulated_backbone(**INSTANT)
    program = PairwiseJudge("chat", judgment="pairwise")  # the call counts below are this judgment's
    global_before = len(base_lm.GLOBAL_HISTORY)
    run(program, lm, tmp_path, 12)
    assert engine.calls == 12 * 12  # 3 concepts, 3 translations, 4 checklists, 2 orders: the run did its work
    # Nothing recorded, so the 5,000th call walks and copies no more than the first.
    assert histories(program, lm) == 0
    assert len(base_lm.GLOBAL_HISTORY) == global_before


def test_keep_history_restores_dspys_history_for_a_run(tmp_path: Path) -> None:
    lm, engine = simulated_backbone(**INSTANT)
    program = PairwiseJudge("chat", judgment="pairwise")
    with keep_history():
        run(program, lm, tmp_path, 2)
    assert len(lm.history) == engine.calls == 24
    assert histories(program, lm) > len(lm.history)  # the modules kept theirs too


def test_one_judgment_through_the_python_api_keeps_its_history() -> None:
    lm, engine = simulated_backbone(**INSTANT)
    program = PairwiseJudge("chat", judgment="pairwise")
    with dspy.context(lm=lm):
        program(instruction="Warum?", response_a="Weil.", response_b="Darum.", language="de")
    assert len(lm.history) == engine.calls == 12  # inspect_history works as before


def test_shared_work_memo_stays_bounded_over_a_long_run(tmp_path: Path) -> None:
    lm, _ = simulated_backbone(**INSTANT)
    program = PairwiseJudge("chat")
    program.shared = type(program.shared)(maxsize=16)
    run(program, lm, tmp_path, 40)  # 40 distinct instructions, 120 distinct texts
    assert len(program.shared) == 16


def test_a_run_tunes_the_garbage_collector_and_restores_it(tmp_path: Path) -> None:
    lm, _ = simulated_backbone(**INSTANT)
    seen: list[tuple[int, int, int]] = []

    class Probe(dspy.Module):
        def __init__(self) -> None:
            super().__init__()
            self.judge = PairwiseJudge("chat")

        async def aforward(self, **inputs: object) -> dspy.Prediction:
            seen.append(gc.get_threshold())
            return await self.judge.acall(**inputs)

    before = gc.get_threshold()
    run(Probe(), lm, tmp_path, 3)
    assert set(seen) == {RUN_GC_THRESHOLD}
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_records_finishing_together_share_one_fsynced_write(tmp_path: Path) -> None:
    from cejudge_dspy.runs import RecordWriter

    path = tmp_path / RESULTS
    writer = RecordWriter(path)

    async def main() -> None:
        await asyncio.gather(*(writer.write({"id": f"r{k}"}) for k in range(20)))

    asyncio.run(main())
    lines = path.read_text(encoding="utf-8").splitlines()
    assert sorted(lines) == sorted(f'{{"id": "r{k}"}}' for k in range(20))
    # All 20 were queued before the writer thread's first turn: one write, one fsync.
    assert writer.writes == 1


def test_a_failed_group_write_fails_every_record_in_it_and_writes_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cejudge_dspy.runs import RunWriteError
    from cejudge_dspy.runs import _writer as writer_module

    def full(path: Path, rows: list[dict[str, str]]) -> None:
        raise RunWriteError(f"cannot write {path} (No space left on device)")

    monkeypatch.setattr(writer_module, "append_records", full)
    writer = writer_module.RecordWriter(tmp_path / RESULTS)

    async def main() -> list[object]:
        return await asyncio.gather(*(writer.write({"id": k}) for k in range(5)), return_exceptions=True)

    outcomes = asyncio.run(main())
    assert all(isinstance(o, RunWriteError) for o in outcomes) and not (tmp_path / RESULTS).exists()


def test_a_run_stops_on_a_write_error_and_keeps_what_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cejudge_dspy.runs import RunWriteError
    from cejudge_dspy.runs import _writer as writer_module
    from cejudge_dspy.runs._files import append_records

    writes: list[int] = []
    written: list[int] = []

    def fails_third(path: Path, rows: list[dict[str, object]]) -> None:
        writes.append(len(rows))
        if len(writes) == 3:
            raise RunWriteError(f"cannot write {path} (No space left on device)")
        append_records(path, rows)
        written.append(len(rows))

    monkeypatch.setattr(writer_module, "append_records", fails_third)
    lm, _ = simulated_backbone(**INSTANT)
    with pytest.raises(RunWriteError):
        run(PairwiseJudge("chat"), lm, tmp_path, 12)
    kept = (tmp_path / RESULTS).read_text(encoding="utf-8").splitlines()
    # The failed write's records are not in the file; the items in flight still finish and are written.
    assert len(kept) == sum(written) == sum(writes) - writes[2] < 12


def test_the_summary_reuses_the_headline_for_the_runs_own_rule_and_gets_the_same_numbers(
    tmp_path: Path,
) -> None:
    from cejudge_dspy.metrics import summarize
    from cejudge_dspy.metrics._summary import decision_rules
    from cejudge_dspy.runs import read_records
    from cejudge_dspy.tasks import load_task
    from tests.support.fakes import fake_lm, scripted_logprobs

    lm, engine = fake_lm()

    def logprobs(stage: str, inputs: dict[str, str], text: str) -> object:
        if stage != "verdict":
            return scripted_logprobs(text)
        k = int("".join(c for c in inputs["response_a"] if c.isdigit()))  # "Antwort A3." / "Antwort B3."
        # P(shown first better): by item with A shown first, even with B shown first.
        p = (
            (0.9, 0.7, 0.55, 0.45, 0.3, 0.6, 0.2, 0.8)[k % 8]
            if inputs["response_a"].startswith("Antwort A")
            else 0.5
        )
        return scripted_logprobs(text, {'"verdict": "': {"A": p, "B": 1 - p}})

    engine.logprobs = logprobs
    labelled = [replace(item, label="AB"[k % 2]) for k, item in enumerate(items(16))]
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        asyncio.run(judge_items(labelled, PairwiseJudge("chat"), tmp_path / RESULTS, task="chat", method="m"))
    records = read_records(tmp_path / RESULTS)
    assert all(r.status == "ok" for r in records)
    spec = load_task("chat")
    summary = summarize(records, spec, n_resamples=200, seed=3)
    rows = sorted(records, key=lambda r: r.id)
    # Computed afresh for both rules, without the headline: the same numbers.
    assert summary["decision_rules"] == decision_rules(rows, spec, n_resamples=200, seed=3)
    rules = summary["decision_rules"]
    assert rules["probability"]["overall"] == summary["overall"]  # the run's own rule is the headline
    assert rules["argmax"]["overall"] != rules["probability"]["overall"]  # the rules do differ here
