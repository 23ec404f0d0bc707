"""DSPy's canonical request -> `llama_cpp.Llama.create_chat_completion` keyword arguments (the engine in
_engine.py sends them): messages, sampling settings, and a JSON schema rewritten for llama.cpp."""

from __future__ import annotations

from typing import Any

from dspy import lm15

_DEFAULT_MAX_TOKENS = 1024  # a grammar does not stop a looping model; never generate unbounded
SAMPLING = ("temperature", "top_p", "top_k", "seed", "frequency_penalty", "presence_penalty")
_ROLES = {"user": "user", "assistant": "assistant", "developer": "system"}


def _unsupported(feature: str) -> lm15.UnsupportedFeatureError:
    return lm15.UnsupportedFeatureError(
        f"the embedded llama.cpp engine does not support {feature}", feature=feature
    )


def _text(parts: Any, where: str) -> str:
    if isinstance(parts, str):
        return parts
    if not all(isinstance(p, lm15.TextPart) for p in parts):
        raise _unsupported(f"non-text content in {where}")
    return "".join(p.text for p in parts)


def llama_response_format(response_format: dict[str, Any] | None) -> dict[str, Any] | None:
    """DSPy's response format -> llama.cpp's in-process one.

    In-process llama.cpp only constrains `{"type": "json_object", "schema": ...}`; the OpenAI
    `json_schema` shape would be ignored silently, so it is rewritten. Both the canonical lm15 shape
    (`schema` at top level) and the OpenAI wire shape (`json_schema.schema`) are accepted.
    """
    if not response_format or response_format.get("type") == "text":
        return None
    kind = response_format.get("type")
    schema = response_format.get("schema")
    if schema is None and isinstance(response_format.get("json_schema"), dict):
        schema = response_format["json_schema"].get("schema")
    if kind not in ("json_object", "json_schema"):
        raise _unsupported(f"response_format type {kind!r}")
    if schema is None:
        return {"type": "json_object"}
    return {"type": "json_object", "schema": bound_lists(schema)}


# A grammar keeps a small model's JSON valid but does not stop it looping: measured on the 1.5B model,
# checklists and answer lists ran on item after item to max_tokens (1024) and were cut mid-string,
# unparsable after a minute of decoding. Arrays the schema leaves unbounded get this many items at most
# (explicit bounds are kept). Strings stay unbounded: a per-character bound bloats the grammar.
LIST_MAX_ITEMS = 8


def bound_lists(schema: Any) -> Any:
    """A copy of a JSON schema whose unbounded arrays hold at most LIST_MAX_ITEMS items."""
    if isinstance(schema, list):
        return [bound_lists(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: bound_lists(v) for k, v in schema.items()}
    if out.get("type") == "array":
        out.setdefault("maxItems", LIST_MAX_ITEMS)
    return out


def chat_kwargs(request: lm15.Request) -> dict[str, Any]:
    """Translate a canonical Request into `Llama.create_chat_completion` keyword arguments."""
    if request.tools:
        raise _unsupported("tools")
    cfg = request.config
    for name in ("tool_choice", "reasoning", "probabilities"):
        if getattr(cfg, name) is not None:
            raise _unsupported(name)
    messages: list[dict[str, str]] = []
    if request.system is not None:
        messages.append({"role": "system", "content": _text(request.system, "the system prompt")})
    for message in request.messages:
        if message.role not in _ROLES:
            raise _unsupported(f"{message.role} messages")
        messages.append({"role": _ROLES[message.role], "content": _text(message.parts, "a message")})
    kwargs: dict[str, Any] = {
        "messages": messages,
        "max_tokens": cfg.max_tokens or _DEFAULT_MAX_TOKENS,
        "stop": list(cfg.stop),
    }
    for name in SAMPLING:
        if (value := getattr(cfg, name)) is not None:
            kwargs[name] = value
    if (response_format := llama_response_format(cfg.response_format)) is not None:
        kwargs["response_format"] = response_format
    # Extensions carry llama.cpp-only samplers (repeat_penalty, min_p, ...); unknown ones fail in llama.
    kwargs.update(cfg.extensions or {})
    return kwargs
