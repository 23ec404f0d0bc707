"""Tests of cejudge_dspy.translate."""
