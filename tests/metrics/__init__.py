"""Tests of cejudge_dspy.metrics."""
