"""Synthetic multilingual items shaped like the papers' data, for the throughput benchmarks.

MM-Eval repeats each prompt across several response pairs and is about a quarter English; LitEval
repeats each source passage across several translations, in both directions (de-en, en-de, ...).
The texts are seeded pseudo-words: only their lengths, languages and repetitions matter to the
simulated backbone, and those are what decide how much work sharing and skipping can save.
"""

from __future__ import annotations

import random

from cejudge_dspy.items import Item

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


def pairwise_items(n: int = 64, per_instruction: int = 4, seed: int = 0) -> list[Item]:
    """`n` items, `per_instruction` response pairs per prompt, prompts adjacent as in the dataset files."""
    rng = random.Random(seed)
    items: list[Item] = []
    instruction, language = "", "en"
    for k in range(n):
        if k % per_instruction == 0:
            language = PAIRWISE_LANGUAGES[(k // per_instruction) % len(PAIRWISE_LANGUAGES)]
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


def pointwise_items(n: int = 32, per_source: int = 4, seed: int = 1) -> list[Item]:
    """`n` literary-translation items, `per_source` translations of each source passage."""
    rng = random.Random(seed)
    items: list[Item] = []
    source, pair = "", LITERARY_PAIRS[0]
    for k in range(n):
        if k % per_source == 0:
            pair = LITERARY_PAIRS[(k // per_source) % len(LITERARY_PAIRS)]
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
