"""Build the judge's `dspy.LM` from a backbone spec, and explain backbone failures in one line.

Specs:

* `embedded` - the packaged Qwen2.5-Coder-1.5B-Instruct GGUF (`_model_file.py`), served by llama.cpp's own
  server, started on 127.0.0.1 for the process (`_local_server.py`);
* `gguf:PATH` - any local GGUF file, served the same way;
* any DSPy model string with a provider prefix, e.g. `hosted_vllm/Qwen/Qwen2.5-7B-Instruct` or
  `openai/gpt-4o-mini`, optionally at `api_base` (an OpenAI-compatible server; include `/v1`), and
  `llama-server/NAME` for a llama.cpp server a user runs (`_provider.py`), as the local models are reached.

`make_lm` checks the spec and its options here, then hands it to its kind's builder (`_builders.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

import dspy

from cejudge_dspy.backbones._builders import (
    LocalOptions,
    build_embedded,
    build_gguf,
    build_http,
    build_simulated,
    invalid_spec,
)
from cejudge_dspy.backbones._capabilities import declare
from cejudge_dspy.backbones._local_server import DEFAULT_N_CTX, DEFAULT_REPEAT_PENALTY, xllamacpp_missing
from cejudge_dspy.backbones._model_file import StatusHook
from cejudge_dspy.backbones._provider import is_llama_server
from cejudge_dspy.backbones._server_lm import DEFAULT_TIMEOUT_S, check_timeout
from cejudge_dspy.errors import BackboneError

MAX_PARALLEL = 12  # a local server's slots: past 4 the measured 2 cores were full; 12 leaves room for more
# The prompt format the judges ask a backbone in (`--adapter`): DSPy's ChatAdapter (`[[ ## field ## ]]`
# markers, with its JSON fallback) or JSONAdapter (one JSON object); `auto` is the backbone's own
# (`resolved_adapter`). judges/_option_choices.py spells the choices again: flags and panel files are read
# without DSPy.
AdapterChoice = Literal["auto", "chat", "json"]
ADAPTERS: tuple[AdapterChoice, ...] = ("auto", "chat", "json")
# The sampling options' ranges (cli/_common.py's Bounds say the same for the flags; tests check they agree):
# temperatures above 2 are outside what HTTP providers accept, llama.cpp's seed is a 32-bit unsigned number.
TEMPERATURE_RANGE = (0.0, 2.0)
SEED_RANGE = (0, 2**32 - 1)


def make_lm(
    spec: str = "embedded",
    *,
    api_base: str | None = None,
    api_key: str | None = None,
    temperature: float = 0.0,
    seed: int = 42,
    max_tokens: int = 1024,
    cache: bool = True,
    on_status: StatusHook | None = None,
    num_retries: int = 3,
    n_ctx: int = DEFAULT_N_CTX,
    constrained: bool = False,
    repeat_penalty: float = DEFAULT_REPEAT_PENALTY,
    parallel: int | None = None,
    require_logprobs: bool = False,
    adapter: str = "auto",
    timeout: float = DEFAULT_TIMEOUT_S,
) -> dspy.LM:
    """Build the `dspy.LM` for a backbone spec. A local model (embedded, gguf:PATH) starts this process's
    llama.cpp server for it on first use (seconds: the model loads), kept until the process exits.

    `constrained`: llama.cpp's server (local models, `llama-server/NAME`) gets the JSON adapter's schema,
    decoded as a grammar (always parses, slower where the model strays from it); other backbones refuse it.
    `num_retries`: transient HTTP failures back off 1, 2, 4 s. `parallel`: a local server's slots, the calls
    it decodes together (None: `DEFAULT_SLOTS`); `n_ctx`: each slot's context; `repeat_penalty`: the local
    server's. HTTP backbones have none of these. `require_logprobs`: a backbone that
    gives no token probabilities is an error (a BackboneError from the first judgment call that finds
    none) instead of the argmax fallback; the judges read it in `capabilities(lm)`.
    `adapter`: auto, chat or json, the prompt format `use_backbone` makes current with the LM
    (`preferred_adapter`); a `dspy.LM` holds no adapter, so here it is only checked, which lets one dict
    of backbone options serve `make_lm`, `check_backbone` and `use_backbone` alike.
    `timeout`: seconds an HTTP backbone's call may take, retries included (`_server_lm.py`), from 1 to 3600.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise invalid_spec(spec, "it is empty")
    spec = spec.strip()
    _check_options(spec, temperature, seed, max_tokens, repeat_penalty, parallel, adapter, constrained)
    try:
        timeout = check_timeout(timeout)
    except ValueError as exc:
        raise BackboneError(str(exc)) from None
    common = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed, "cache": cache}
    if spec == "simulated" or spec.startswith("simulated:"):
        if api_key:  # it would be ignored: the simulated backbone sends nothing anywhere
            raise BackboneError(f"--api-key applies to HTTP backbones only, not to '{spec}'; drop it")
        return _required(build_simulated(spec, api_base=api_base, common=common), require_logprobs)
    if not is_local(spec):
        lm = build_http(
            spec,
            api_base=api_base,
            api_key=api_key,
            num_retries=num_retries,
            common=common,
            timeout=timeout,
            constrained=constrained,
        )
        return _required(lm, require_logprobs)
    _check_local(spec, api_base)
    local = LocalOptions(
        on_status=on_status,
        n_ctx=n_ctx,
        constrained=constrained,
        repeat_penalty=repeat_penalty,
        parallel=parallel,
    )
    if spec == "embedded":
        lm = build_embedded(local, common, num_retries, timeout)
    else:
        lm = build_gguf(spec[5:].strip(), local, common, num_retries, timeout)
    return _required(lm, require_logprobs)


def _required(lm: dspy.LM, require_logprobs: bool) -> dspy.LM:
    """`lm` with its capabilities declared (`_capabilities.declare`): every `make_lm` road ends here."""
    return declare(lm, require_logprobs=require_logprobs)


def is_local(spec: Any) -> bool:
    """Whether a backbone spec names a local GGUF model the package serves (embedded or gguf:PATH)."""
    return isinstance(spec, str) and (spec.strip() == "embedded" or spec.strip().startswith("gguf:"))


def _check_options(
    spec: str,
    temperature: Any,
    seed: Any,
    max_tokens: Any,
    repeat_penalty: Any,
    parallel: Any,
    adapter: Any,
    constrained: Any = False,
) -> None:
    """Every check of a backbone's options before anything is built or loaded: one list for `make_lm` and
    for `check_backbone`'s embedded shortcut, so neither can miss one the other makes."""
    _check_sampling(temperature, seed, max_tokens)
    _check_repeat_penalty(spec, repeat_penalty)
    _check_parallel(spec, parallel)
    _check_adapter(spec, adapter, constrained)


def _check_sampling(temperature: Any, seed: Any, max_tokens: Any) -> None:
    """The same ranges the flags have, for a caller of the Python API: NaN, an infinity or a negative
    temperature would otherwise reach the backbone (every answer unparsed) and the run's identity."""
    low, high = TEMPERATURE_RANGE
    number = isinstance(temperature, int | float) and not isinstance(temperature, bool)
    if not number or not low <= temperature <= high:
        raise BackboneError(f"temperature must be a number from {low:g} to {high:g}, got {temperature!r}")
    low_seed, high_seed = SEED_RANGE
    if isinstance(seed, bool) or not isinstance(seed, int) or not low_seed <= seed <= high_seed:
        raise BackboneError(f"seed must be a whole number from {low_seed} to {high_seed}, got {seed!r}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise BackboneError(f"max_tokens must be a whole number of at least 1, got {max_tokens!r}")


def _check_repeat_penalty(spec: str, penalty: float) -> None:
    if not penalty > 0:  # also refuses NaN
        raise BackboneError(f"--repeat-penalty must be above 0 (1 turns it off), got {penalty!r}")
    if penalty != DEFAULT_REPEAT_PENALTY and not is_local(spec):
        raise BackboneError(f"--repeat-penalty applies to local GGUF models only, not to '{spec}'; drop it")


def _check_parallel(spec: str, parallel: Any) -> None:
    if parallel is None:  # the backbone's own default
        return
    if not isinstance(parallel, int) or isinstance(parallel, bool) or not 1 <= parallel <= MAX_PARALLEL:
        raise BackboneError(f"--parallel must be a whole number from 1 to {MAX_PARALLEL}, got {parallel!r}")
    if parallel > 1 and not is_local(spec):
        raise BackboneError(f"--parallel applies to local GGUF models only, not to '{spec}'; drop it")


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
        raise BackboneError(f"--api-base applies to HTTP backbones only, not to '{spec}'; drop it")
    if spec.startswith("gguf:") and not spec[5:].strip():
        raise invalid_spec(spec, "gguf: needs a file path after the colon")
    if why := xllamacpp_missing():  # checked first: assembling the packaged model would be wasted
        raise BackboneError(why)


def check_backbone(spec: str, *, api_base: str | None = None, **options: Any) -> None:
    """Raise the BackboneError `make_lm` would, without loading or assembling any model.

    Run before anything is written, so a mistyped `--lm` never leaves a run directory behind. The
    packaged model is only checked for its runtime (assembling it is the slow part of its first use).
    """
    if isinstance(spec, str) and spec.strip() == "embedded":
        _check_options(
            "embedded",
            options.get("temperature", 0.0),
            options.get("seed", 42),
            options.get("max_tokens", 1024),
            options.get("repeat_penalty", DEFAULT_REPEAT_PENALTY),
            options.get("parallel"),
            options.get("adapter", "auto"),
            options.get("constrained", False),
        )
        _check_local("embedded", api_base)
        return
    make_lm(spec, api_base=api_base, **options)


def resolved_adapter(spec: str, adapter: str = "auto") -> Literal["chat", "json"]:
    """The adapter `adapter` (auto, chat or json) stands for on backbone `spec`: auto is json for
    llama.cpp's server (local GGUF models, `llama-server/NAME`) and chat for every other backbone
    (`preferred_adapter`)."""
    if adapter in ("chat", "json"):
        return adapter  # type: ignore[return-value]
    return "json" if _json_first(spec) else "chat"


def _json_first(spec: str) -> bool:
    return is_local(spec) or is_llama_server(spec)


def preferred_adapter(spec: str, adapter: str = "auto") -> dspy.Adapter | None:
    """The adapter a backbone judges with; None keeps DSPy's default (ChatAdapter + JSON fallback).

    `auto`: the one it parses best with. Measured on the embedded 1.5B model: JSONAdapter with a
    schema-constrained decode parsed 5/5 typed outputs, ChatAdapter without its fallback 0/5 (it writes
    `[[ ## field ## ]] = B`). llama.cpp's server (local GGUF models, `llama-server/NAME`) turns the JSON
    adapter's schema into a grammar, so it gets JSONAdapter; other HTTP servers keep DSPy's default (None,
    so a `dspy.configure(adapter=...)` of the caller's still holds).
    `json`/`chat` choose for a backbone auto guesses wrong for: a small model behind a server that does not
    follow the chat adapter's field markers parses as JSON. `chat` is DSPy's ChatAdapter, JSON fallback
    included, the same one an HTTP backbone gets by default.
    """
    _check_adapter(spec, adapter)
    if adapter == "auto":
        return dspy.JSONAdapter() if _json_first(spec) else None
    return dspy.JSONAdapter() if adapter == "json" else dspy.ChatAdapter()


def adapter_name(adapter: Any) -> str:
    """What a record says judged with `adapter` (a current `dspy.settings.adapter`): `json` for DSPy's
    JSONAdapter, `chat` for its ChatAdapter or None (DSPy's default); any other DSPy adapter by its class
    name. Read off the first DSPy class the adapter is: subclasses that keep DSPy's formatting (the judges'
    memoising ones) are what they subclass, and XMLAdapter, a ChatAdapter subclass, is itself."""
    if adapter is None:
        return "chat"
    dspy_class = next((c for c in type(adapter).__mro__ if c.__module__.startswith("dspy.")), type(adapter))
    return {dspy.JSONAdapter: "json", dspy.ChatAdapter: "chat"}.get(dspy_class, dspy_class.__name__)


@contextmanager
def use_backbone(spec: str = "embedded", *, adapter: str = "auto", **options: Any) -> Iterator[dspy.LM]:
    """Make a backbone current for a block: `with use_backbone("embedded"): judge(...)`.

    Uses `dspy.context` (safe in any thread), never `dspy.configure`; `options` go to `make_lm`.
    `adapter`: the prompt format, "json" or "chat" (default "auto": the backbone's own; `preferred_adapter`).
    """
    lm = make_lm(spec, adapter=adapter, **options)
    current = preferred_adapter(spec, adapter)
    with dspy.context(lm=lm, **({"adapter": current} if current else {})):
        yield lm
