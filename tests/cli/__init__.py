"""Tests of cejudge_dspy.cli."""
