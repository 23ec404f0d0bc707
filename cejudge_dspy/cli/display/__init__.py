"""Rich rendering for the CLI: verdict panels, run tables, task listings. The only module (with the
CLI) that imports rich; everything it shows comes from JudgeResult, summaries and TaskSpec."""

from cejudge_dspy.cli.display._answers import match_answers
from cejudge_dspy.cli.display._consistency import consistency_table
from cejudge_dspy.cli.display._label_free import label_free_table
from cejudge_dspy.cli.display._panel import panel_tables, votes_table
from cejudge_dspy.cli.display._ranking import ranking_tables
from cejudge_dspy.cli.display._rules import (
    decision_rules_table,
    reliability_table,
    selective_table,
    tie_band_table,
)
from cejudge_dspy.cli.display._tables import (
    compare_table,
    dimension_tables,
    items_panels,
    summary_table,
    tasks_table,
)
from cejudge_dspy.cli.display._text import console
from cejudge_dspy.cli.display._verdicts import (
    pairwise_verdict,
    pointwise_score,
    probability_line,
    verdict_panel,
)

__all__ = [
    "compare_table",
    "consistency_table",
    "console",
    "decision_rules_table",
    "dimension_tables",
    "items_panels",
    "label_free_table",
    "match_answers",
    "pairwise_verdict",
    "panel_tables",
    "pointwise_score",
    "probability_line",
    "ranking_tables",
    "reliability_table",
    "selective_table",
    "summary_table",
    "tasks_table",
    "tie_band_table",
    "verdict_panel",
    "votes_table",
]
