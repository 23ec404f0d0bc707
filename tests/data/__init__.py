"""Tests of cejudge_dspy.data."""
