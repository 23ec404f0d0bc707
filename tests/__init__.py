"""The test suite; its folders mirror cejudge_dspy's packages, helpers live in tests.support."""
