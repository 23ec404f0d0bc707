"""Tests of cejudge_dspy.runs."""
