"""benchmarks/bench_rank_calls.py: with N systems on P prompts, CE-Judge's prompt-side stages run once per
prompt and its answer-side stages once per answer, however many comparisons they enter (simulated backbone,
cache off); only the pairwise judgment is paid per comparison."""

from __future__ import annotations

from pathlib import Path

import dspy
import pytest

from benchmarks import bench_rank_calls
from cejudge_dspy.backbones import simulated_backbone
from cejudge_dspy.rank import RankOptions, rank

PROMPT_STAGES = ("concepts", "translate")  # the instruction's concepts and its English (German prompts)
ANSWER_STAGES = ("concepts", "translate", "checklist_r2i", "checklist_i2r", "grade")


@pytest.mark.parametrize("n_systems", [3, 6, 10])
def test_graded_comparisons_pay_nothing_twice(n_systems: int) -> None:
    prompts = 2
    row = bench_rank_calls.count_calls(n_systems, prompts, "graded")
    answers = n_systems * prompts
    assert row["comparisons"] == prompts * n_systems * (n_systems - 1) // 2 == row["judged"]
    stages = row["stages"]
    for stage in PROMPT_STAGES:
        assert stages[f"prompt/{stage}"] == prompts
    for stage in ANSWER_STAGES:
        assert stages[f"answer/{stage}"] == answers
    assert row["sides"] == {
        "prompt": 2 * prompts,
        "answer": 5 * answers,
        "pairwise": row["sides"]["pairwise"],
    }
    # Graded: only comparisons whose grades are equal pay for the pairwise judgment, in both orders.
    assert row["sides"]["pairwise"] == row["stages"].get("pairwise/verdict", 0)
    assert row["sides"]["pairwise"] % 2 == 0 and row["sides"]["pairwise"] <= 2 * row["comparisons"]
    # One comparison alone: the prompt's two stages and both answers' five.
    assert row["alone"] == 2 + 2 * 5
    assert row["per_comparison"] < row["alone"]


def test_pairwise_judgment_pays_only_its_two_orders_per_comparison() -> None:
    row = bench_rank_calls.count_calls(4, 2, "pairwise")
    assert row["sides"]["pairwise"] == 2 * row["comparisons"]
    assert row["stages"]["prompt/concepts"] == 2
    assert row["stages"]["answer/checklist_i2r"] == 8
    assert "answer/grade" not in row["stages"]


def test_the_table_prints(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_rank_calls.main(["--systems", "3", "--prompts", "1", "--judgments", "graded"]) == 0
    out = capsys.readouterr().out
    assert "| 3 | 1 | 3 | 3 | 2 | 15 |" in out


def test_a_second_ranking_reuses_every_call_through_the_cache(tmp_path: Path) -> None:
    """Across runs the shared work lives in DSPy's cache: a new run directory over the same answers, with a
    fresh cache object over the same folder (memory off), asks the backbone for nothing."""
    old = dspy.cache
    folder = tmp_path / "dspy-cache"
    try:
        dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=True, disk_cache_dir=str(folder))
        lm, engine = simulated_backbone(
            cache=True, base_latency=0.0, per_prompt_token=0.0, per_output_token=0.0
        )
        answers = bench_rank_calls.synthetic_answers(3, 2)
        with dspy.context(lm=lm):
            first = rank("chat", answers, tmp_path / "first", options=RankOptions(bootstrap=0))
        assert engine.calls > 0
        dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=False, disk_cache_dir=str(folder))
        engine.reset()
        with dspy.context(lm=lm):
            again = rank("chat", answers, tmp_path / "again", options=RankOptions(bootstrap=0))
        assert engine.calls == 0
        assert again["systems"] == first["systems"]
    finally:
        dspy.cache = old
