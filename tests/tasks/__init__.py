"""Tests of cejudge_dspy.tasks."""
