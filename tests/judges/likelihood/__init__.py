"""Tests of cejudge_dspy.judges.likelihood."""
