"""The three schedules: all pairs, against a baseline, and the adaptive rounds' rule."""

from __future__ import annotations

import itertools

import pytest

from cejudge_dspy.data import Item
from cejudge_dspy.errors import InputError
from cejudge_dspy.rank import (
    Answer,
    SystemAnswers,
    against_baseline,
    all_pairs,
    first_round,
    next_round,
    overlap,
)


def answers(systems: list[str], prompts: list[str]) -> SystemAnswers:
    table = {
        (p, s): Answer(
            p, s, Item(id=f"{p}/{s}", mode="pointwise", instruction=f"ask {p}", response=f"{s} says")
        )
        for p in prompts
        for s in systems
    }
    return SystemAnswers(tuple(systems), tuple(prompts), table)


def test_all_pairs_covers_every_pair_on_every_prompt_and_balances_positions() -> None:
    data = answers(["a", "b", "c", "d"], [f"p{i}" for i in range(10)])
    comps = all_pairs(data, seed=1)
    assert len(comps) == 6 * 10
    assert {c.pair for c in comps} == set(itertools.combinations("abcd", 2))
    assert len({c.id for c in comps}) == len(comps)
    first = sum(c.first == min(c.pair) for c in comps)
    assert 15 <= first <= 45  # the shown-first system is drawn per comparison, not always the same one


def test_all_pairs_uses_only_prompts_both_answered() -> None:
    data = answers(["a", "b", "c"], ["p1", "p2"])
    del data.answers[("p2", "c")]
    comps = all_pairs(data, seed=0)
    assert sorted((c.pair, c.prompt) for c in comps if "c" in c.pair) == [
        (("a", "c"), "p1"),
        (("b", "c"), "p1"),
    ]


def test_baseline_meets_every_other_system() -> None:
    data = answers(["a", "b", "c"], ["p1", "p2", "p3"])
    comps = against_baseline(data, "b", seed=0)
    assert len(comps) == 2 * 3
    assert all("b" in c.pair for c in comps)
    with pytest.raises(InputError, match="no system 'zz'"):
        against_baseline(data, "zz", seed=0)


def test_overlap() -> None:
    assert overlap((0, 1), (2, 3)) == 0.0
    assert overlap((0, 2), (1, 3)) == pytest.approx(1 / 3)
    assert overlap((0, 1), (0, 1)) == 1.0


def test_adaptive_first_round_then_the_most_overlapping_pairs() -> None:
    data = answers(["a", "b", "c", "d"], [f"p{i}" for i in range(5)])
    round0 = first_round(data, seed=2)
    assert sorted(c.pair for c in round0) == sorted(itertools.combinations("abcd", 2))
    # a and b overlap most, c and d next; a/b against c/d not at all.
    intervals = {"a": (0.0, 1.0), "b": (0.1, 1.0), "c": (2.0, 3.0), "d": (2.5, 3.5)}
    picked = next_round(data, round0, intervals, size=2, budget=100, seed=2)
    assert [c.pair for c in picked] == [("a", "b"), ("c", "d")]
    # Each on a prompt the pair has not met yet.
    met = {c.pair: c.prompt for c in round0}
    assert all(c.prompt != met[c.pair] for c in picked)
    # The budget caps the round, and a spent budget ends the schedule.
    assert len(next_round(data, round0, intervals, size=5, budget=len(round0) + 1, seed=2)) == 1
    assert next_round(data, round0, intervals, size=5, budget=len(round0), seed=2) == []


def test_adaptive_stops_when_a_pair_has_no_prompt_left() -> None:
    data = answers(["a", "b"], ["p1"])
    round0 = first_round(data, seed=0)
    assert next_round(data, round0, {"a": (0, 1), "b": (0, 1)}, size=3, budget=10, seed=0) == []
