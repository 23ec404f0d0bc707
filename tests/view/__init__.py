"""Tests of cejudge_dspy.view."""
