"""Measuring a judge: meta-metrics against human labels, significance, agreement, calibration, CheckEval
reliability, selective judging (risk-coverage, AURC, abstaining), and the run summaries, comparisons and
markdown tables that read run records."""

from cejudge_dspy.metrics._agreement import fleiss_kappa, fleiss_kappa_from_labels, krippendorff_alpha
from cejudge_dspy.metrics._calibrate_report import MAX_BINS, calibrate
from cejudge_dspy.metrics._calibration import calibrate_run
from cejudge_dspy.metrics._checkeval import checkeval_agreement, mean_human_score, per_group_correlation
from cejudge_dspy.metrics._compare import compare_runs, load_run
from cejudge_dspy.metrics._consistency import (
    changed,
    changed_rate,
    flip_rate,
    mean_abs_change,
    paired_consistency,
    rendering_consistency,
)
from cejudge_dspy.metrics._correlations import CORRELATIONS, kendall_tau, pearson, spearman
from cejudge_dspy.metrics._dimensions import dimension_table
from cejudge_dspy.metrics._measures import accuracy, concordance, position_consistency, strict_accuracy
from cejudge_dspy.metrics._panel import fit_logistic, panel_summary, stack_pairwise, stack_pointwise
from cejudge_dspy.metrics._predictions import average, score_prediction_files, strict_average
from cejudge_dspy.metrics._result import MetricResult
from cejudge_dspy.metrics._scoring import language_key, prediction
from cejudge_dspy.metrics._selective import (
    CONFIDENCES,
    aurc,
    item_confidence,
    risk_coverage,
    selective_summary,
)
from cejudge_dspy.metrics._significance import bootstrap_ci, mcnemar, paired_bootstrap_diff
from cejudge_dspy.metrics._summary import summarize
from cejudge_dspy.metrics._tables import ablation_table, rules_table

__all__ = [
    "CONFIDENCES",
    "MAX_BINS",
    "calibrate",
    "CORRELATIONS",
    "MetricResult",
    "ablation_table",
    "accuracy",
    "aurc",
    "average",
    "bootstrap_ci",
    "calibrate_run",
    "changed",
    "changed_rate",
    "checkeval_agreement",
    "compare_runs",
    "concordance",
    "dimension_table",
    "fit_logistic",
    "flip_rate",
    "fleiss_kappa",
    "fleiss_kappa_from_labels",
    "item_confidence",
    "kendall_tau",
    "krippendorff_alpha",
    "language_key",
    "load_run",
    "mcnemar",
    "mean_abs_change",
    "mean_human_score",
    "paired_bootstrap_diff",
    "panel_summary",
    "paired_consistency",
    "pearson",
    "per_group_correlation",
    "position_consistency",
    "prediction",
    "risk_coverage",
    "rendering_consistency",
    "rules_table",
    "score_prediction_files",
    "selective_summary",
    "spearman",
    "stack_pairwise",
    "stack_pointwise",
    "strict_accuracy",
    "strict_average",
    "summarize",
]
