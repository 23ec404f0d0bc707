"""Running a judge over items and measuring it: records, the runner, summaries, comparisons, meta-metrics."""

from cejudge_dspy.evaluation.agreement import fleiss_kappa, fleiss_kappa_from_labels, krippendorff_alpha
from cejudge_dspy.evaluation.checkeval import checkeval_agreement, mean_human_score, per_group_correlation
from cejudge_dspy.evaluation.compare import compare_runs, load_run
from cejudge_dspy.evaluation.merge import merge_runs
from cejudge_dspy.evaluation.metrics import (
    CORRELATIONS,
    MetricResult,
    accuracy,
    concordance,
    kendall_tau,
    pearson,
    position_consistency,
    spearman,
    strict_accuracy,
)
from cejudge_dspy.evaluation.predictions import average, score_prediction_files
from cejudge_dspy.evaluation.runner import (
    RESULTS,
    RESUME_KEYS,
    RUN,
    SUMMARY,
    Record,
    RunProgress,
    judge_items,
    pending_items,
    prepare_run_dir,
    read_records,
)
from cejudge_dspy.evaluation.significance import bootstrap_ci, mcnemar, paired_bootstrap_diff
from cejudge_dspy.evaluation.summary import dimension_table, summarize

__all__ = [
    "CORRELATIONS",
    "RESULTS",
    "RESUME_KEYS",
    "RUN",
    "SUMMARY",
    "MetricResult",
    "Record",
    "RunProgress",
    "accuracy",
    "average",
    "bootstrap_ci",
    "checkeval_agreement",
    "compare_runs",
    "concordance",
    "dimension_table",
    "fleiss_kappa",
    "fleiss_kappa_from_labels",
    "judge_items",
    "kendall_tau",
    "krippendorff_alpha",
    "load_run",
    "mcnemar",
    "mean_human_score",
    "merge_runs",
    "paired_bootstrap_diff",
    "pearson",
    "pending_items",
    "per_group_correlation",
    "position_consistency",
    "prepare_run_dir",
    "read_records",
    "score_prediction_files",
    "spearman",
    "strict_accuracy",
    "summarize",
]
