"""llama.cpp in-process: the embedded model's file, the serial and batched engines behind
`dspy.LM(model, engine=...)` (scheduler, prefix store, token probabilities, scoring a given answer)."""

from cejudge_dspy.backbones.llamacpp._batch_engine import BATCH_PARALLEL, DEFAULT_PARALLEL, BatchedLlamaEngine
from cejudge_dspy.backbones.llamacpp._batch_steps import DRAFT_JOBS
from cejudge_dspy.backbones.llamacpp._embedded import resolve_gguf
from cejudge_dspy.backbones.llamacpp._engine import (
    DEFAULT_REPEAT_PENALTY,
    AsyncLlamaCppEngine,
    LlamaCppEngine,
)
from cejudge_dspy.backbones.llamacpp._gguf import StatusHook, check_gguf, prompt_state_dir
from cejudge_dspy.backbones.llamacpp._prefix_cache import DEFAULT_PROMPT_CACHE_BYTES

__all__ = [
    "AsyncLlamaCppEngine",
    "BATCH_PARALLEL",
    "BatchedLlamaEngine",
    "DEFAULT_PARALLEL",
    "DEFAULT_PROMPT_CACHE_BYTES",
    "DEFAULT_REPEAT_PENALTY",
    "DRAFT_JOBS",
    "LlamaCppEngine",
    "StatusHook",
    "check_gguf",
    "prompt_state_dir",
    "resolve_gguf",
]
