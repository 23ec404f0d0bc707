"""Instruction tuning of a task's CE-Judge program (GEPA, zero-shot MIPROv2, SIMBA) against human labels."""

from cejudge_dspy.tuning._budget import (
    OPTIMIZERS,
    Budget,
    CallEstimate,
    estimate_calls,
    gepa_metric_calls,
    parse_budget,
    split_items,
)
from cejudge_dspy.tuning._dev import DevScore, evaluate_dev
from cejudge_dspy.tuning._metrics import metric_for, pairwise_concordance, pairwise_metric, pointwise_metric
from cejudge_dspy.tuning._optimize import optimize
from cejudge_dspy.tuning._pairwise_scoring import pairwise_feedback
from cejudge_dspy.tuning._pointwise_scoring import pointwise_feedback
from cejudge_dspy.tuning._report import OptimizeReport

__all__ = [
    "Budget",
    "CallEstimate",
    "DevScore",
    "OPTIMIZERS",
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
