"""Tests of cejudge_dspy.backbones.llamacpp."""
