"""`llama-server/NAME`: llama.cpp's own server declared to DSPy as a provider.

A model string `openai/NAME` reaches an OpenAI-compatible server, but DSPy knows nothing of what the model
behind it can do, so its JSON adapter describes the output format in the prompt and sends no schema.
llama.cpp's server turns a JSON schema (`response_format`) into a grammar, and reports token log
probabilities. Declared as a provider (DSPy's `lm15.register_provider`), `llama-server/NAME` with
`--api-base` gets both, and the package's local models (`embedded`, `gguf:PATH`) are served the same way:
one road for the server a user runs and the one the package starts.
"""

from __future__ import annotations

import threading

LLAMA_SERVER = "llama-server"
DEFAULT_BASE_URL = "http://127.0.0.1:8080/v1"  # llama-server's own default address
_registered = False
_lock = threading.Lock()


def is_llama_server(spec: object) -> bool:
    return isinstance(spec, str) and spec.strip().startswith(LLAMA_SERVER + "/")


def register_llama_server() -> None:
    """Declare the provider once per process (before the first `dspy.LM("llama-server/...")`)."""
    global _registered
    with _lock:
        if _registered:
            return
        from dspy.lm15 import (
            AccessPolicy,
            ModelSupport,
            OpenAIChatCompat,
            ProviderDefinition,
            register_provider,
        )

        # The spellings llama.cpp's server reads (tools/server/README.md): `max_tokens`, a system role,
        # usage in the stream's last chunk; it has no reasoning dial, cache_control field or strict tools.
        compat = OpenAIChatCompat(
            instruction_role="system",
            max_tokens_field="max_tokens",
            stream_usage="include",
            thinking_format="none",
            tool_result_name="omit",
            strict_tools="omit",
            cache_control="none",
            tool_result_media="reject",
        )
        definition = ProviderDefinition.chat(
            AccessPolicy(provider=LLAMA_SERVER, base_url=DEFAULT_BASE_URL),
            compat=compat,
            placeholder_key="sk-no-key-required",  # the server takes any key unless started with --api-key
            note="llama.cpp's own OpenAI-compatible server (llama-server)",
        )
        register_provider(definition, supports=ModelSupport(response_schema=True))
        _registered = True
