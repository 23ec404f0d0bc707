"""Benchmarks a user runs (python -m benchmarks.NAME); experiments/ holds engine probes."""
