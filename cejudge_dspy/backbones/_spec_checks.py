"""What a backbone spec and its settings refuse, checked without building an LM or importing DSPy.

`make_lm` (_spec.py) runs these checks before it builds anything, and `check_backbone` runs them alone,
before a run directory opens: one set of rules, worded once. `resolved_adapter` (which prompt format
`auto` means on a backbone) is here too: the checks read it.
"""

from __future__ import annotations

from typing import Any, Literal

from cejudge_dspy.backbones._local_server import xllamacpp_missing
from cejudge_dspy.backbones._options import ADAPTERS, DEFAULT_REPEAT_PENALTY, BackboneOptions, is_local
from cejudge_dspy.backbones._provider import is_llama_server
from cejudge_dspy.errors import BackboneError

EXAMPLES = (
    "'embedded', 'gguf:/models/model.gguf', 'hosted_vllm/Qwen/Qwen2.5-7B-Instruct' with --api-base "
    "http://HOST:PORT/v1, 'openai/gpt-4o-mini', 'ollama_chat/qwen2.5:7b', 'simulated:50' (benchmarks)"
)


def invalid_spec(spec: object, why: str) -> BackboneError:
    return BackboneError(f"invalid backbone {spec!r}: {why}; valid examples: {EXAMPLES}")


def is_simulated(spec: Any) -> bool:
    return isinstance(spec, str) and (spec == "simulated" or spec.startswith("simulated:"))


def http_only(flag: str, spec: str) -> BackboneError:
    """The one wording for a setting given to a backbone that sends nothing over HTTP."""
    return BackboneError(f"{flag} applies to HTTP backbones only, not to '{spec}'; drop it")


def check_simulated(spec: str, api_base: str | None, api_key: str | None) -> dict[str, Any]:
    """What a simulated spec refuses (a key or a server: it sends nothing anywhere; a malformed spec);
    its engine's keyword arguments."""
    if api_key:
        raise http_only("--api-key", spec)
    if api_base:
        raise http_only("--api-base", spec)
    return parse_spec(spec)


def _check_applies(options: BackboneOptions) -> None:
    """What the settings' bounds (BackboneOptions, checked when it was made) cannot say: a setting given to
    a backbone that has no such thing. One list for `make_lm` and `check_backbone`'s embedded shortcut."""
    spec = options.lm
    if options.repeat_penalty != DEFAULT_REPEAT_PENALTY and not is_local(spec):
        raise BackboneError(f"--repeat-penalty applies to local GGUF models only, not to '{spec}'; drop it")
    if options.parallel is not None and options.parallel > 1 and not is_local(spec):
        raise BackboneError(f"--parallel applies to local GGUF models only, not to '{spec}'; drop it")
    _check_adapter(spec, options.adapter, options.constrained)


def _check_adapter(spec: str, adapter: Any, constrained: Any = False) -> None:
    if adapter not in ADAPTERS:
        raise BackboneError(f"--adapter must be one of {', '.join(ADAPTERS)}, got {adapter!r}")
    if not constrained:
        return
    if not _json_first(spec):
        raise BackboneError(
            f"--constrained applies to llama.cpp's server (local GGUF models, llama-server/NAME), not to "
            f"'{spec}'; drop it"
        )
    # The grammar is the JSON adapter's schema: under the chat adapter no schema is sent, and --constrained
    # would be accepted and do nothing.
    if resolved_adapter(spec, adapter) == "chat":
        raise BackboneError(
            "--constrained decodes under the JSON adapter's schema, which --adapter chat does not send; "
            "drop one of them"
        )


def _check_local(spec: str, api_base: str | None) -> None:
    """What a local spec refuses before any file is read: an api_base, an empty path, no llama.cpp server."""
    if api_base:
        raise http_only("--api-base", spec)
    if spec.startswith("gguf:") and not spec[5:].strip():
        raise invalid_spec(spec, "gguf: needs a file path after the colon")
    if why := xllamacpp_missing():  # checked first: assembling the packaged model would be wasted
        raise BackboneError(why)


def resolved_adapter(spec: str, adapter: str = "auto") -> Literal["chat", "json"]:
    """The adapter `adapter` (auto, chat or json) stands for on backbone `spec`: auto is json for
    llama.cpp's server (local GGUF models, `llama-server/NAME`) and chat for every other backbone
    (`preferred_adapter`)."""
    if adapter in ("chat", "json"):
        return adapter  # type: ignore[return-value]
    return "json" if _json_first(spec) else "chat"


def _json_first(spec: str) -> bool:
    return is_local(spec) or is_llama_server(spec)


def parse_spec(spec: str) -> dict[str, Any]:
    """`simulated[:MS | :base=MS,prompt=MS,output=MS,slots=N]` -> SimulatedEngine keyword arguments."""
    name, _, rest = spec.strip().partition(":")
    if name != "simulated":
        raise BackboneError(f"invalid backbone {spec!r}: not a simulated spec")
    rest = rest.strip()
    out: dict[str, Any] = {}
    keys = {"base": "base_latency", "prompt": "per_prompt_token", "output": "per_output_token"}
    try:
        if rest and "=" not in rest:
            out = {"base_latency": float(rest) / 1000, "per_prompt_token": 0.0, "per_output_token": 0.0}
        for part in rest.split(",") if "=" in rest else []:
            key, _, value = part.strip().partition("=")
            if key == "slots":
                out["max_concurrency"] = int(value)
            elif key in keys:
                out[keys[key]] = float(value) / 1000
            else:
                raise ValueError(f"unknown key {key!r}")
    except ValueError as exc:
        raise BackboneError(
            f"invalid backbone {spec!r}: {exc}; expected 'simulated', 'simulated:MS' or "
            "'simulated:base=MS,prompt=MS,output=MS,slots=N' (milliseconds)"
        ) from exc
    if any(v < 0 for v in out.values()) or out.get("max_concurrency", 1) < 1:
        raise BackboneError(f"invalid backbone {spec!r}: latencies must be >= 0 and slots >= 1")
    return out
