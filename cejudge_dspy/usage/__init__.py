"""LM accounting for one judgment: calls issued, cache hits, reused stage results and tokens, and the
`StageProgress` events a caller receives as each stage call starts and finishes."""

from cejudge_dspy.usage._accounting import Usage, collecting, note_reused, record_call
from cejudge_dspy.usage._calls import count_lm_call
from cejudge_dspy.usage._progress import (
    StageProgress,
    about,
    clock,
    current_subject,
    expect_more_calls,
    on_progress,
)

__all__ = [
    "StageProgress",
    "Usage",
    "about",
    "clock",
    "collecting",
    "count_lm_call",
    "current_subject",
    "expect_more_calls",
    "note_reused",
    "on_progress",
    "record_call",
]
