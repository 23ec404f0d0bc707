"""Ranking systems: several systems' answers to the same prompts judged pairwise (all pairs, against a
baseline, or on an adaptive schedule) into Bradley-Terry strengths, or pointwise into mean scores, with
bootstrap intervals over prompts, the win-rate matrix, ties, position bias, per language, and the
system-level agreement with human scores where the answers carry them. `rank(...)` is what
`cejudge rank` calls."""

from cejudge_dspy.rank._bradley_terry import (
    DEFAULT_ALPHA,
    Outcome,
    bootstrap_strengths,
    bradley_terry,
    mean_interval,
)
from cejudge_dspy.rank._read import read_ranking
from cejudge_dspy.rank._run import (
    RANKING,
    RankOptions,
    adaptive_budget,
    answers_digest,
    arank,
    comparison_item,
    pointwise_items,
    rank,
    schedule,
)
from cejudge_dspy.rank._schedule import (
    SCHEDULES,
    Comparison,
    against_baseline,
    all_pairs,
    comparison,
    first_round,
    next_round,
    overlap,
)
from cejudge_dspy.rank._summary import system_correlation
from cejudge_dspy.rank._systems import (
    PROMPT_KEY,
    SYSTEM_KEY,
    Answer,
    SystemAnswers,
    load_systems,
    parse_sources,
)

__all__ = [
    "DEFAULT_ALPHA",
    "PROMPT_KEY",
    "RANKING",
    "SCHEDULES",
    "SYSTEM_KEY",
    "Answer",
    "Comparison",
    "Outcome",
    "RankOptions",
    "SystemAnswers",
    "adaptive_budget",
    "against_baseline",
    "all_pairs",
    "answers_digest",
    "arank",
    "bootstrap_strengths",
    "bradley_terry",
    "comparison",
    "comparison_item",
    "first_round",
    "load_systems",
    "mean_interval",
    "next_round",
    "overlap",
    "parse_sources",
    "pointwise_items",
    "rank",
    "read_ranking",
    "schedule",
    "system_correlation",
]
