"""Synthetic multilingual items shaped like the papers' data, for the throughput benchmarks.

How often an instruction repeats decides how much shared work can save, so items per instruction are
drawn from the real data's distribution, not fixed: 1 + Poisson(mean - 1), which gives a singleton most
of the time and a pair or triple now and then. Measured means: the held-out multilingual pairs 1.37,
`pairwise_en_dev` 1.04 (125 singletons, 5 pairs), `translation_da_dev` 1.00 (every source once); so
pairwise items default to 1.37 and pointwise ones to 1.0. About a quarter of the instructions are
English, as in MM-Eval; LitEval-like pairs run in both directions (de-en, en-de, ...). The texts are
seeded pseudo-words: only their lengths, languages and repetitions matter to the simulated backbone.
"""

from __future__ import annotations

import math
import random

from cejudge_dspy.data import Item

# Every fourth instruction is English, as in MM-Eval's mix.
PAIRWISE_LANGUAGES = (
    "en",
    "de",
    "fr",
    "ja",
    "en",
    "es",
    "zh",
    "sw",
    "en",
    "ru",
    "ko",
    "ca",
    "en",
    "id",
    "eu",
    "vi",
)
LITERARY_PAIRS = (("de", "en"), ("en", "de"), ("ja", "en"), ("en", "zh"), ("zh", "en"), ("en", "ko"))


def _text(rng: random.Random, language: str, words: tuple[int, int]) -> str:
    syllables = ("ka", "lo", "mi", "ten", "ra", "su", "vel", "do", "an", "qui", "ber", "sho", "ni", "pa")
    n = rng.randint(*words)
    body = " ".join("".join(rng.choice(syllables) for _ in range(rng.randint(1, 3))) for _ in range(n))
    return f"({language}) {body}."


PAIRWISE_PER_INSTRUCTION = 1.37  # held-out multilingual pairs
POINTWISE_PER_SOURCE = 1.0  # translation_da_dev


def group_sizes(n: int, mean: float, rng: random.Random) -> list[int]:
    """Items per instruction, 1 + Poisson(mean - 1) each, until `n` items are covered (the last trimmed)."""
    sizes: list[int] = []
    while sum(sizes) < n:
        # Knuth's Poisson draw: small means only.
        limit, k, p = math.exp(-(mean - 1)), 0, rng.random()
        while p > limit:
            k, p = k + 1, p * rng.random()
        sizes.append(min(1 + k, n - sum(sizes)))
    return sizes


def _starts(n: int, mean: float, rng: random.Random) -> set[int]:
    starts, at = set(), 0
    for size in group_sizes(n, mean, rng):
        starts.add(at)
        at += size
    return starts


def pairwise_items(
    n: int = 64, per_instruction: float = PAIRWISE_PER_INSTRUCTION, seed: int = 0
) -> list[Item]:
    """`n` items, a mean of `per_instruction` response pairs per prompt, prompts adjacent as in the files."""
    rng = random.Random(seed)
    starts = _starts(n, per_instruction, random.Random(seed + 1000))
    items: list[Item] = []
    instruction, language, group = "", "en", -1
    for k in range(n):
        if k in starts:
            group += 1
            language = PAIRWISE_LANGUAGES[group % len(PAIRWISE_LANGUAGES)]
            instruction = _text(rng, language, (25, 70))
        items.append(
            Item(
                id=f"pw{k:04d}",
                mode="pairwise",
                instruction=instruction,
                response_a=_text(rng, language, (60, 200)),
                response_b=_text(rng, language, (60, 200)),
                language=language,
                label="A",
            )
        )
    return items


def pointwise_items(n: int = 32, per_source: float = POINTWISE_PER_SOURCE, seed: int = 1) -> list[Item]:
    """`n` literary-translation items, a mean of `per_source` translations of each source passage."""
    rng = random.Random(seed)
    starts = _starts(n, per_source, random.Random(seed + 1000))
    items: list[Item] = []
    source, pair, group = "", LITERARY_PAIRS[0], -1
    for k in range(n):
        if k in starts:
            group += 1
            pair = LITERARY_PAIRS[group % len(LITERARY_PAIRS)]
            source = _text(rng, pair[0], (50, 140))
        items.append(
            Item(
                id=f"lt{k:04d}",
                mode="pointwise",
                instruction=source,
                response=_text(rng, pair[1], (50, 150)),
                language=pair[0],
                response_language=pair[1],
                label=float(rng.randint(1, 7)),
            )
        )
    return items
