"""Tests of cejudge_dspy.cli.display."""
