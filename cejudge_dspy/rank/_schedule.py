"""Which comparisons a ranking judges: all pairs, against a baseline, or an adaptive schedule.

A comparison is one prompt and two systems; the judge sees it as one pairwise item (which system is
shown as A is drawn per comparison from the seed, so each system is first about half the time) and judges
it in both presentation orders itself (the pairwise methods' default `--orders both`).

- `all-pairs`: every pair of systems on every prompt both answered.
- `baseline`: every system against the baseline on every prompt both answered (AlpacaEval's design).
- `adaptive`: spends a budget of comparisons where the ranking is least certain. Round 0 judges every
  pair once (on its first shared prompt in seeded order), so every strength is tied to every other.
  Each later round fits the Bradley-Terry strengths with their bootstrap intervals on everything judged
  so far, scores each pair by how much its two intervals overlap (the length of their intersection over
  the length of their union: 1 when one interval holds the other and their ends meet, 0 when they are
  apart), and judges the `round_size` pairs that overlap most (ties: fewer comparisons judged first,
  then the pair's names), each on its next unjudged shared prompt. It stops when the budget is spent or
  no overlapping pair has a prompt left. Every choice follows from the seed and the records, so a rerun
  replays the same rounds and judges only what is missing.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from cejudge_dspy.errors import InputError
from cejudge_dspy.rank._systems import SystemAnswers

Schedule = Literal["all-pairs", "baseline", "adaptive"]
SCHEDULES: tuple[Schedule, ...] = ("all-pairs", "baseline", "adaptive")


@dataclass(frozen=True)
class Comparison:
    """One prompt's answers of two systems, `first` shown as response A."""

    prompt: str
    first: str
    second: str

    @property
    def id(self) -> str:
        return f"{self.prompt} · {self.first} vs {self.second}"

    @property
    def pair(self) -> tuple[str, str]:
        return tuple(sorted((self.first, self.second)))  # type: ignore[return-value]


def comparison(prompt: str, a: str, b: str, seed: int) -> Comparison:
    """The comparison of `a` and `b` on `prompt`, with the system shown first drawn from the seed."""
    x, y = sorted((a, b))
    flip = hashlib.sha256(f"{seed}\0{prompt}\0{x}\0{y}".encode()).digest()[0] & 1
    return Comparison(prompt, y, x) if flip else Comparison(prompt, x, y)


def all_pairs(answers: SystemAnswers, seed: int) -> list[Comparison]:
    return [
        comparison(p, a, b, seed)
        for a, b in itertools.combinations(answers.systems, 2)
        for p in answers.shared_prompts(a, b)
    ]


def against_baseline(answers: SystemAnswers, baseline: str, seed: int) -> list[Comparison]:
    if baseline not in answers.systems:
        raise InputError(
            f"no system '{baseline}' in the data; systems: {', '.join(answers.systems)}", field="--baseline"
        )
    return [
        comparison(p, s, baseline, seed)
        for s in answers.systems
        if s != baseline
        for p in answers.shared_prompts(s, baseline)
    ]


def prompt_order(answers: SystemAnswers, a: str, b: str, seed: int) -> list[str]:
    """The order in which the adaptive schedule takes a pair's shared prompts: seeded, per pair."""
    prompts = answers.shared_prompts(a, b)
    random.Random(f"{seed}\0{a}\0{b}").shuffle(prompts)
    return prompts


def first_round(answers: SystemAnswers, seed: int) -> list[Comparison]:
    """Every pair once, on its first shared prompt in seeded order (pairs with none are left out)."""
    out = []
    for a, b in itertools.combinations(sorted(answers.systems), 2):
        order = prompt_order(answers, a, b, seed)
        if order:
            out.append(comparison(order[0], a, b, seed))
    return out


def overlap(x: tuple[float, float], y: tuple[float, float]) -> float:
    """Length of two intervals' intersection over that of their union (0 when apart; 1 when equal)."""
    inter = min(x[1], y[1]) - max(x[0], y[0])
    union = max(x[1], y[1]) - min(x[0], y[0])
    if inter < 0:
        return 0.0
    return 1.0 if union <= 0 else inter / union


def next_round(
    answers: SystemAnswers,
    done: Sequence[Comparison],
    intervals: dict[str, tuple[float, float]],
    *,
    size: int,
    budget: int,
    seed: int,
) -> list[Comparison]:
    """The adaptive schedule's next round (see the module docstring); empty when it is over."""
    left = budget - len(done)
    if left <= 0:
        return []
    judged: dict[tuple[str, str], set[str]] = {}
    for c in done:
        judged.setdefault(c.pair, set()).add(c.prompt)
    candidates = []
    for a, b in itertools.combinations(sorted(answers.systems), 2):
        if a not in intervals or b not in intervals:
            continue
        score = overlap(intervals[a], intervals[b])
        rest = [p for p in prompt_order(answers, a, b, seed) if p not in judged.get((a, b), set())]
        if score > 0 and rest:
            candidates.append((-score, len(judged.get((a, b), ())), a, b, rest[0]))
    candidates.sort()
    return [comparison(p, a, b, seed) for _, _, a, b, p in candidates[: min(size, left)]]
