"""Tests of cejudge_dspy.judges.geval."""
