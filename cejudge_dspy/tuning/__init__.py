"""Instruction tuning of a task's CE-Judge program (GEPA, zero-shot MIPROv2, SIMBA) against human labels."""

from cejudge_dspy.tuning.budget import (
    OPTIMIZERS,
    Budget,
    CallEstimate,
    estimate_calls,
    gepa_metric_calls,
    parse_budget,
    split_items,
)
from cejudge_dspy.tuning.dev import DevScore, evaluate_dev
from cejudge_dspy.tuning.metrics import (
    metric_for,
    pairwise_concordance,
    pairwise_feedback,
    pairwise_metric,
    pointwise_feedback,
    pointwise_metric,
)
from cejudge_dspy.tuning.optimize import optimize
from cejudge_dspy.tuning.report import OptimizeReport

__all__ = [
    "OPTIMIZERS",
    "Budget",
    "CallEstimate",
    "DevScore",
    "OptimizeReport",
    "estimate_calls",
    "evaluate_dev",
    "gepa_metric_calls",
    "metric_for",
    "optimize",
    "pairwise_concordance",
    "pairwise_feedback",
    "pairwise_metric",
    "parse_budget",
    "pointwise_feedback",
    "pointwise_metric",
    "split_items",
]
