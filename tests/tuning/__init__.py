"""Tests of cejudge_dspy.tuning."""
