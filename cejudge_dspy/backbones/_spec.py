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
from typing import TYPE_CHECKING, Any

from cejudge_dspy.backbones._capabilities import declare
from cejudge_dspy.backbones._local_server import DEFAULT_N_CTX
from cejudge_dspy.backbones._model_file import StatusHook
from cejudge_dspy.backbones._options import (
    DEFAULT_REPEAT_PENALTY,
    DEFAULT_TIMEOUT_S,
    BackboneOptions,
    is_local,
)
from cejudge_dspy.backbones._spec_checks import (
    _check_adapter,
    _check_applies,
    _check_local,
    _json_first,
    check_simulated,
    invalid_spec,
    is_simulated,
)

if TYPE_CHECKING:  # DSPy is imported where an LM is built or made current, not to check a spec
    import dspy

# The settings' defaults, bounds and choices are BackboneOptions' (_options.py): `make_lm` reads its keyword
# arguments into one, so a Python caller, a flag and a --config key are checked by the same `Option.problem`.


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
    options = BackboneOptions(
        lm=spec, api_base=api_base, api_key=api_key, temperature=temperature, seed=seed,
        max_tokens=max_tokens, constrained=constrained, repeat_penalty=repeat_penalty, adapter=adapter,  # type: ignore[arg-type]
        timeout=timeout, cache=cache, require_logprobs=require_logprobs, parallel=parallel,
    )  # fmt: skip
    _check_applies(options)
    from cejudge_dspy.backbones._builders import (
        LocalOptions,
        build_embedded,
        build_gguf,
        build_http,
        build_simulated,
    )

    timeout = float(timeout)
    common = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed, "cache": cache}
    if is_simulated(spec):
        check_simulated(spec, api_base, api_key)
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


def check_backbone(spec: str, *, api_base: str | None = None, **options: Any) -> None:
    """Raise the BackboneError `make_lm` would, without loading or assembling any model.

    Run before anything is written, so a mistyped `--lm` never leaves a run directory behind. The
    packaged model is only checked for its runtime (assembling it is the slow part of its first use); a
    simulated spec is parsed. Neither imports DSPy (a rerun that finds nothing to judge needs none of it);
    any other spec is checked by building its LM (`make_lm`), which is what its checks need.
    """
    stripped = spec.strip() if isinstance(spec, str) else spec
    if stripped == "embedded" or is_simulated(stripped):
        options.pop("on_status", None)
        options.pop("num_retries", None)
        options.pop("n_ctx", None)
        settings = BackboneOptions.from_kwargs(stripped, api_base=api_base, **options)
        _check_applies(settings)
        if stripped == "embedded":
            _check_local("embedded", api_base)
        else:
            check_simulated(stripped, api_base, settings.api_key)
        return
    make_lm(spec, api_base=api_base, **options)


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
    import dspy

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
    import dspy

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
    import dspy

    with dspy.context(lm=lm, **({"adapter": current} if current else {})):
        yield lm
