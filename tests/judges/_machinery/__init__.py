"""Tests of cejudge_dspy.judges._machinery, the machinery the methods share."""
