"""Backbones: one `--lm` string becomes a `dspy.LM` (embedded llama.cpp, a GGUF file, an HTTP server, or the
latency-simulating fake), made current with `use_backbone`. Programs never hold an LM."""

from cejudge_dspy.backbones.batch_engine import BATCH_PARALLEL, DEFAULT_PARALLEL
from cejudge_dspy.backbones.errors import explain_backbone_error
from cejudge_dspy.backbones.llama_engine import DEFAULT_REPEAT_PENALTY
from cejudge_dspy.backbones.simulated import SimulatedEngine, simulated_backbone
from cejudge_dspy.backbones.spec import (
    EXAMPLES,
    cache_scope,
    check_backbone,
    gguf_model_name,
    is_local,
    make_lm,
    preferred_adapter,
    use_backbone,
)

__all__ = [
    "BATCH_PARALLEL",
    "DEFAULT_PARALLEL",
    "DEFAULT_REPEAT_PENALTY",
    "EXAMPLES",
    "SimulatedEngine",
    "cache_scope",
    "check_backbone",
    "explain_backbone_error",
    "gguf_model_name",
    "is_local",
    "make_lm",
    "preferred_adapter",
    "simulated_backbone",
    "use_backbone",
]
