"""Backbones: one `--lm` string becomes a `dspy.LM` (an HTTP server, or a local GGUF file, the embedded one
included, served by llama.cpp's own server; or the latency-simulating fake), made current with `use_backbone`.
Programs never hold an LM."""

from cejudge_dspy.backbones._builders import EXAMPLES, cache_scope, gguf_model_name
from cejudge_dspy.backbones._capabilities import Capabilities, capabilities, learn_logprobs, text_scorer
from cejudge_dspy.backbones._errors import backbone_failure, error_line, explain_backbone_error
from cejudge_dspy.backbones._features import FeatureCheck, check_features
from cejudge_dspy.backbones._http_scoring import ServerScorer
from cejudge_dspy.backbones._local_server import (
    DEFAULT_REPEAT_PENALTY,
    DEFAULT_SLOTS,
    running_servers,
    stop_all,
)
from cejudge_dspy.backbones._logprobs import checked_logprob, logprob_problem, logprobs_problem
from cejudge_dspy.backbones._model_file import resolve_gguf
from cejudge_dspy.backbones._provider import LLAMA_SERVER
from cejudge_dspy.backbones._server_lm import (
    DEFAULT_TIMEOUT_S,
    TIMEOUT_RANGE,
    AnswerCutShort,
    CallTimedOut,
    EmptyAnswer,
    ServerLM,
    whole_answers,
)
from cejudge_dspy.backbones._simulated import SimulatedEngine, simulated_backbone
from cejudge_dspy.backbones._spec import (
    ADAPTERS,
    adapter_name,
    check_backbone,
    is_local,
    make_lm,
    preferred_adapter,
    resolved_adapter,
    use_backbone,
)

__all__ = [
    "ADAPTERS",
    "DEFAULT_REPEAT_PENALTY",
    "DEFAULT_SLOTS",
    "LLAMA_SERVER",
    "DEFAULT_TIMEOUT_S",
    "EXAMPLES",
    "TIMEOUT_RANGE",
    "AnswerCutShort",
    "Capabilities",
    "CallTimedOut",
    "EmptyAnswer",
    "FeatureCheck",
    "ServerLM",
    "ServerScorer",
    "SimulatedEngine",
    "adapter_name",
    "backbone_failure",
    "cache_scope",
    "capabilities",
    "check_backbone",
    "check_features",
    "checked_logprob",
    "error_line",
    "explain_backbone_error",
    "gguf_model_name",
    "is_local",
    "learn_logprobs",
    "logprob_problem",
    "logprobs_problem",
    "make_lm",
    "preferred_adapter",
    "resolve_gguf",
    "resolved_adapter",
    "running_servers",
    "simulated_backbone",
    "stop_all",
    "text_scorer",
    "use_backbone",
    "whole_answers",
]
