"""Instruction tuning of a task's CE-Judge program (GEPA, zero-shot MIPROv2, SIMBA) against human labels."""

import lazy_loader

# The face is lazy (lazy_loader.attach): a name is imported on first use, so that the CLI builds its
# flags without importing DSPy (`cejudge --help` answers at once; tests/cli/test_startup.py), and dir()
# lists every name. One list: the module that holds each public name.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "_budget": [
            "Budget",
            "CallEstimate",
            "estimate_calls",
            "gepa_metric_calls",
            "parse_budget",
            "split_items",
        ],
        "_checkpoint": ["Checkpoint", "checkpoints_root"],
        "_choices": ["OPTIMIZERS"],
        "_dev": ["DevScore", "evaluate_dev"],
        "_metrics": ["metric_for", "pairwise_concordance", "pairwise_metric", "pointwise_metric"],
        "_optimize": ["optimize"],
        "_pairwise_scoring": ["pairwise_feedback"],
        "_pointwise_scoring": ["pointwise_feedback"],
        "_report": ["OptimizeReport"],
    },
)
