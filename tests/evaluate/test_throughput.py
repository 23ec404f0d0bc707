"""Less work and bounded concurrency, counted on the simulated backbone (no timing assertions).

Counts are exact: the simulated engine answers every stage deterministically, so which calls happen
depends only on the inputs, the sharing and the cache.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import dspy
import pytest

from benchmarks.paper_pipeline import PaperPairwise  # noqa: E402
from cejudge_dspy.backbones import SimulatedEngine, simulated_backbone
from cejudge_dspy.data import Item
from cejudge_dspy.evaluate import group_key as shard_key
from cejudge_dspy.evaluate import judge_items, merge_runs, shard_of
from cejudge_dspy.judges.cejudge import PairwiseJudge
from cejudge_dspy.metrics import summarize
from cejudge_dspy.runs import RESULTS, Record, prepare_run_dir, read_records
from cejudge_dspy.tasks import load_task

INSTANT = {"base_latency": 0.0, "per_prompt_token": 0.0, "per_output_token": 0.0}


def shared_instruction_items(language: str, n: int = 4) -> list[Item]:
    instruction = {"de": "Erkläre kurz, warum der Himmel blau ist.", "en": "Explain why the sky is blue."}[
        language
    ]
    return [
        Item(
            id=f"{language}{k}",
            mode="pairwise",
            instruction=instruction,
            response_a=f"Antwort A{k}: Licht.",
            response_b=f"Antwort B{k}: Streuung.",
            language=language,
            label="A",
        )
        for k in range(n)
    ]


def judge(
    items: Sequence[Item], program: dspy.Module, lm: dspy.LM, out: Path, concurrency: int = 4
) -> list[Record]:
    out.mkdir(parents=True, exist_ok=True)
    with dspy.context(lm=lm):
        return asyncio.run(
            judge_items(items, program, out / RESULTS, task="chat", method="cejudge", concurrency=concurrency)
        )


def total(records: Sequence[Record], key: str) -> int:
    return sum(getattr(r.result.usage, key) for r in records)


def stage_total(records: Sequence[Record], stage: str) -> int:
    return sum(r.result.usage.by_stage.get(stage, 0) for r in records)


@pytest.mark.parametrize(
    ("language", "orders", "expected"),
    [
        # Once for the shared instruction (concepts + translation), then per item 2 concepts,
        # 2 translations, 4 checklists and one judgment per order: 2 + 4 * 10 = 42.
        ("de", "both", 42),
        ("de", "single", 38),
        # English is never translated: 1 + 4 * (2 concepts + 4 checklists + 2 judgments).
        ("en", "both", 33),
    ],
)
def test_calls_per_item_with_shared_instruction(
    tmp_path: Path, language: str, orders: str, expected: int
) -> None:
    lm, engine = simulated_backbone(**INSTANT)
    # The paper's judgment for every pair, so the counts are the method's (graded adds 2 per item).
    program = PairwiseJudge("chat", orders=orders, judgment="pairwise")
    records = judge(shared_instruction_items(language), program, lm, tmp_path)
    assert all(r.status == "ok" for r in records)
    assert engine.calls == expected == total(records, "calls")
    # The instruction's work (concepts, and translation) is computed once: every other request for it
    # is a reuse, one per item for its second response plus two for the three later items' first.
    per_instruction = 2 if language == "de" else 1
    assert total(records, "reused") == per_instruction * (4 + 3)
    assert stage_total(records, "Concepts") == 1 + 4 * 2
    assert stage_total(records, "Translate") == (1 + 4 * 2 if language == "de" else 0)
    assert all(c.source_language in (None, "German") for c in engine.log)
    assert stage_total(records, "VerdictJudgment") == 4 * (2 if orders == "both" else 1)


@pytest.mark.parametrize("language", ["en", "de"])
def test_paper_pipeline_makes_eight_llm_calls_per_pairwise_item_whatever_is_shared(
    tmp_path: Path, language: str
) -> None:
    lm, engine = simulated_backbone(**INSTANT)
    paper = PaperPairwise("chat", batch_latency=0.0)
    records = judge(shared_instruction_items(language), paper, lm, tmp_path)
    assert all(r.status == "ok" for r in records)
    # The paper's code: 3 concepts, 4 checklists, 1 judgment, nothing shared; translation is external,
    # one batched request per item, and English is not sent at all.
    assert engine.calls == 4 * 8 and total(records, "reused") == 0
    assert paper.translator.requests == (0 if language == "en" else 4)


def test_sequential_llm_translation_baseline_makes_eleven_calls_per_pairwise_item(tmp_path: Path) -> None:
    lm, engine = simulated_backbone(**INSTANT)
    records = judge(shared_instruction_items("en"), PaperPairwise("chat", translator="llm"), lm, tmp_path)
    assert all(r.status == "ok" for r in records)
    assert engine.calls == 4 * 11 and total(records, "reused") == 0
    assert sum(c.stage == "translate" and c.source_language == "English" for c in engine.log) == 4 * 3


def test_critical_path_follows_each_responses_own_chain() -> None:
    from benchmarks.harness import critical_paths
    from cejudge_dspy.backbones._simulated import CallLog

    def call(stage: str, latency: float, which: str | None) -> CallLog:
        return CallLog(stage, "item", 0, 0, latency, None, which)

    log = [
        call("concepts", 1.0, "instruction"),
        call("translate", 2.0, "instruction"),
        call("concepts", 1.0, "A"),
        call("translate", 1.0, "A"),
        call("concepts", 5.0, "B"),
        call("checklist_r2i", 3.0, "A"),
        call("checklist_i2r", 1.0, "A"),
        call("checklist_r2i", 1.0, "B"),
        call("verdict", 1.0, "A shown first"),
        call("verdict", 2.0, "B shown first"),
    ]
    # A: max(2, 1) + 3 = 5; B: max(2, 5) + 1 = 6; then the slower order, 2. Level maxima would add
    # 5 + 3 + 2 = 10. A sequential pipeline waits for every call: 18.
    assert critical_paths(log) == {"item": 8.0}
    assert critical_paths(log, sequential=True) == {"item": 18.0}
    # Graded: each response's grade follows its checklists; the tie-breaking judgment follows both.
    graded = [*log, call("grade", 4.0, "A"), call("grade", 1.0, "B")]
    assert critical_paths(graded) == {"item": max(5.0 + 4.0, 6.0 + 1.0) + 2.0}


@pytest.fixture
def disk_cache(tmp_path: Path) -> Iterator[Path]:
    """A DSPy cache in a temp directory for the test; the previous cache object comes back afterwards."""
    old = dspy.cache
    folder = tmp_path / "dspy-cache"
    dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=True, disk_cache_dir=str(folder))
    try:
        yield folder
    finally:
        dspy.cache = old


def test_rerun_with_persistent_cache_makes_no_engine_calls(tmp_path: Path, disk_cache: Path) -> None:
    lm, engine = simulated_backbone(cache=True, **INSTANT)
    items = shared_instruction_items("de")
    first = judge(items, PairwiseJudge("chat", judgment="pairwise"), lm, tmp_path / "first")
    assert engine.calls == 42 and total(first, "cached") == 0
    # A fresh cache object over the same folder with memory off: only what persisted on disk can answer.
    dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=False, disk_cache_dir=str(disk_cache))
    engine.reset()
    again = judge(items, PairwiseJudge("chat", judgment="pairwise"), lm, tmp_path / "again")
    assert engine.calls == 0
    assert total(again, "calls") == total(again, "cached") == 42
    assert {r.id: r.result.verdict for r in again} == {r.id: r.result.verdict for r in first}


class CountingProgram(dspy.Module):
    """Counts the items inside the wrapped judge at once (the runner's bound is on items, not calls)."""

    def __init__(self, program: dspy.Module) -> None:
        super().__init__()
        self.program = program
        self.in_flight = self.peak = 0

    async def aforward(self, **inputs: Any) -> dspy.Prediction:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            return await self.program.acall(**inputs)
        finally:
            self.in_flight -= 1


def distinct_items(n: int, per_instruction: int = 1) -> list[Item]:
    languages = ("de", "fr", "en", "ja")
    return [
        Item(
            id=f"i{k:02d}",
            mode="pairwise",
            instruction=f"Frage {k // per_instruction}?",
            response_a=f"Antwort {k} eins",
            response_b=f"Antwort {k} zwei",
            language=languages[(k // per_instruction) % 4],
            label="A",
        )
        for k in range(n)
    ]


def test_items_in_flight_never_exceed_concurrency(tmp_path: Path) -> None:
    # A small latency keeps calls overlapping; server slots bound the calls being served.
    lm, engine = simulated_backbone(
        base_latency=0.005, per_prompt_token=0.0, per_output_token=0.0, max_concurrency=4
    )
    program = CountingProgram(PairwiseJudge("chat"))
    records = judge(distinct_items(12), program, lm, tmp_path, concurrency=3)
    assert len(records) == 12 and all(r.status == "ok" for r in records)
    assert program.peak == 3  # reached, never exceeded
    # One pairwise item issues up to 6 calls at once (3 concepts + 3 translations), so calls in flight
    # can reach 6 per item: bound items to protect a server, and size its slots for the calls.
    assert engine.peak_in_flight <= 6 * 3
    assert engine.peak_serving <= 4 < engine.peak_in_flight


def test_engine_counts_and_latency_model() -> None:
    engine = SimulatedEngine(base_latency=0.1, per_prompt_token=0.001, per_output_token=0.01)
    assert engine.latency(100, 10) == pytest.approx(0.1 + 0.1 + 0.1)
    assert engine.tokens("x" * 40) == 10


def run_dir(path: Path, items: Sequence[Item], lm: dspy.LM, shard: str | None) -> Path:
    prepare_run_dir(path, {"task": "chat", "method": "cejudge", "lm": "simulated", "shard": shard})
    judge(items, PairwiseJudge("chat"), lm, path)
    return path


def test_shards_cover_every_item_once_and_merge_like_one_run(tmp_path: Path) -> None:
    lm, _ = simulated_backbone(**INSTANT)
    items = distinct_items(24, per_instruction=3)
    shards = [[i for i in items if shard_of(shard_key(i), 3) == k] for k in range(3)]
    assert sorted(i.id for s in shards for i in s) == sorted(i.id for i in items)  # each item exactly once
    assert all(shards)
    dirs = [run_dir(tmp_path / f"shard{k + 1}", s, lm, f"{k + 1}/3") for k, s in enumerate(shards)]
    single = read_records(run_dir(tmp_path / "single", items, lm, None) / RESULTS)
    merged = merge_runs(dirs, tmp_path / "merged", n_resamples=200)
    assert sorted(r.id for r in read_records(tmp_path / "merged" / RESULTS)) == sorted(i.id for i in items)
    whole = summarize(single, load_task("chat"), n_resamples=200)
    # Shards follow the instruction, so items of one instruction share its work in one shard.
    assert merged["usage"]["calls"] == whole["usage"]["calls"]
    for key in (
        "task",
        "metric",
        "n_items",
        "n_ok",
        "n_unparsed",
        "n_error",
        "average",
        "share_shown_A",
        "share_final_A",
        "position_consistency",
    ):
        assert merged[key] == whole[key], key
    values = {lang: v["value"] for lang, v in merged["per_language"].items()}
    assert values == {lang: v["value"] for lang, v in whole["per_language"].items()}
    assert merged["overall"]["value"] == whole["overall"]["value"]


def test_merged_confidence_intervals_match_one_run(tmp_path: Path) -> None:
    lm, _ = simulated_backbone(**INSTANT)
    items = distinct_items(24, per_instruction=3)
    dirs = [
        run_dir(
            tmp_path / f"shard{k + 1}", [i for i in items if shard_of(shard_key(i), 3) == k], lm, f"{k + 1}/3"
        )
        for k in range(3)
    ]
    single = read_records(run_dir(tmp_path / "single", items, lm, None) / RESULTS)
    merged = merge_runs(dirs, tmp_path / "merged", n_resamples=1000)
    whole = summarize(single, load_task("chat"), n_resamples=1000)
    assert merged["overall"] == whole["overall"] and merged["per_language"] == whole["per_language"]


def test_items_per_instruction_follow_the_measured_distribution() -> None:
    import random

    from benchmarks.synthetic import PAIRWISE_PER_INSTRUCTION, group_sizes, pairwise_items, pointwise_items

    sizes = group_sizes(20_000, PAIRWISE_PER_INSTRUCTION, random.Random(0))
    assert sum(sizes) == 20_000 and min(sizes) == 1
    # 1 + Poisson(0.37): about 69% singletons, a mean of 1.37 (the held-out multilingual pairs).
    assert abs(sum(sizes) / len(sizes) - 1.37) < 0.02
    assert abs(sizes.count(1) / len(sizes) - 0.69) < 0.02
    assert group_sizes(50, 1.0, random.Random(0)) == [1] * 50  # every source once (translation_da_dev)
    items = pairwise_items(400)
    per_instruction = len(items) / len({i.instruction for i in items})
    assert 1.25 < per_instruction < 1.5
    assert len({i.instruction for i in pointwise_items(40)}) == 40


def test_the_benchmark_harness_runs_a_pipeline_and_its_counts_add_up() -> None:
    from benchmarks.harness import run as harness_run

    lm, engine = simulated_backbone(**INSTANT)
    items = shared_instruction_items("de")
    program = PairwiseJudge("chat", judgment="pairwise")  # the paper's judgment: counts as above
    r = harness_run("ours/2", program, items, lm, engine, 2, task="chat")
    assert r.n == 4 and r.engine_calls == r.usage["calls"] == 42 and r.usage["reused"] == 14
    assert r.by_stage["VerdictJudgment"] == 8 and set(r.paths) == {i.id for i in items}
