"""Engine micro-benchmarks and one-off probes (python -m benchmarks.experiments.NAME)."""
