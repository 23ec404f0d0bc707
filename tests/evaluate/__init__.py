"""Tests of cejudge_dspy.evaluate."""
