"""Build the judge's `dspy.LM` from a backbone spec, and explain backbone failures in one line.

Specs:

* `embedded` - the packaged Qwen2.5-Coder-1.5B-Instruct GGUF, run in-process (see `embedded.py`);
* `gguf:PATH` - any local GGUF file, run in-process;
* any DSPy model string with a provider prefix, e.g. `hosted_vllm/Qwen/Qwen2.5-7B-Instruct` or
  `openai/gpt-4o-mini`, optionally at `api_base` (an OpenAI-compatible server; include `/v1`).

Cache scoping. DSPy's response cache key is the request (model string, messages, sampling options)
with `api_key`, `api_base` and `base_url` removed, so two servers serving the same model name would
share cached answers. `rollout_id` is the one field that is part of the key yet stripped before the
request is sent (`dspy.clients.execution._canonical` drops it; the LiteLLM path pops it). An HTTP
backbone with an `api_base` therefore gets a `rollout_id` derived from the normalised address. Local
models need no scope: their model name carries a fingerprint of the file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dspy

from cejudge_dspy.backbones.llamacpp import (
    DEFAULT_PARALLEL,
    DEFAULT_PROMPT_CACHE_BYTES,
    DEFAULT_REPEAT_PENALTY,
    DRAFT_JOBS,
    AsyncLlamaCppEngine,
    BatchedLlamaEngine,
    LlamaCppEngine,
    StatusHook,
    check_gguf,
    prompt_state_dir,
    resolve_gguf,
)
from cejudge_dspy.errors import BackboneError

MAX_PARALLEL = 12  # sequences in flight; the engine keeps N_SEQ ids, two of them free for prefixes

EXAMPLES = (
    "'embedded', 'gguf:/models/model.gguf', 'hosted_vllm/Qwen/Qwen2.5-7B-Instruct' with --api-base "
    "http://HOST:PORT/v1, 'openai/gpt-4o-mini', 'ollama_chat/qwen2.5:7b', 'simulated:50' (benchmarks)"
)
LOCAL_PROVIDER = "llamacpp-local"
PLACEHOLDER_API_KEY = "sk-no-key-required"  # local OpenAI-compatible servers ignore it; lm15 wants one
_MODEL_STRING = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/\S+$")
_ROLLOUT_WARNING = "rollout_id has no effect when temperature=0"


def gguf_model_name(path: Path) -> str:
    """`llamacpp-local/<stem>-<12 hex>` from the file's name, size and first and last MiB.

    Hashing a multi-GB file on every start is too slow; name, size and the two ends (header metadata
    and tensor data) tell models apart, so DSPy's cache never mixes answers from two files.
    """
    size = path.stat().st_size
    digest = hashlib.sha256(f"{path.name}|{size}|".encode())
    with path.open("rb") as fh:
        digest.update(fh.read(1 << 20))
        fh.seek(max(size - (1 << 20), 0))
        digest.update(fh.read(1 << 20))
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", path.stem)
    return f"{LOCAL_PROVIDER}/{stem}-{digest.hexdigest()[:12]}"


def cache_scope(api_base: str | None) -> int | None:
    """The `rollout_id` that keeps one server's cached answers from another's (None: no api_base).

    48 bits of the address hash: DSPy's BestOfN/Refine/SIMBA add small offsets to an existing
    rollout_id, which keeps them apart per server too.
    """
    if not api_base:
        return None
    normalised = api_base.strip().rstrip("/").lower()
    return int(hashlib.sha256(normalised.encode()).hexdigest()[:12], 16)


def _llama_cpp_installed() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def _invalid(spec: object, why: str) -> BackboneError:
    return BackboneError(f"invalid backbone {spec!r}: {why}; valid examples: {EXAMPLES}")


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
    n_ctx: int = 8192,
    constrained: bool = False,
    repeat_penalty: float = DEFAULT_REPEAT_PENALTY,
    prompt_cache_bytes: int = DEFAULT_PROMPT_CACHE_BYTES,
    prompt_states: bool = True,
    parallel: int | None = None,
    draft: bool = True,
    draft_jobs: int = DRAFT_JOBS,
) -> dspy.LM:
    """Build the `dspy.LM` for a backbone spec; cheap (a local model loads on its first call).

    `num_retries` applies to HTTP backbones (transient failures back off 1, 2, 4 s); a local model
    has nothing transient to retry. `parallel`: calls decoded together by a local model (None: its
    default, the batched engine with DEFAULT_PARALLEL; 1: the serial engine); HTTP backbones have none.
    `draft`: the batched engine verifies prompt-lookup drafts, kept only where greedy decoding agrees,
    while at most `draft_jobs` calls decode (batch_steps.DRAFT_JOBS).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise _invalid(spec, "it is empty")
    spec = spec.strip()
    _check_repeat_penalty(spec, repeat_penalty)
    _check_parallel(spec, parallel)
    common = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed, "cache": cache}
    if spec == "simulated" or spec.startswith("simulated:"):
        from cejudge_dspy.backbones._simulated import (
            simulated_lm,  # latency-simulating backbone for benchmarks
        )

        return simulated_lm(spec, api_base=api_base, **common)
    if spec == "embedded" or spec.startswith("gguf:"):
        if api_base:
            raise BackboneError(f"--api-base applies to HTTP backbones only, not to '{spec}'; drop it")
        if spec.startswith("gguf:") and not spec[5:].strip():
            raise _invalid(spec, "gguf: needs a file path after the colon")
        if not _llama_cpp_installed():  # checked first: assembling the packaged model would be wasted
            raise BackboneError(
                "llama-cpp-python is not installed, so local GGUF models cannot run; "
                "pip install 'cejudge-dspy[embedded]' or use an HTTP backbone with --api-base"
            )
        if spec.startswith("gguf:"):
            path = check_gguf(Path(spec[5:].strip()), "path")
        else:
            path = resolve_gguf(on_status=on_status)
        # Grammar-constrained decoding is opt-in: measured 4-5x slower per token on 2 cores (llama.cpp
        # checks the whole vocabulary each step), while JSONAdapter's prompt alone parsed here.
        # The repeat penalty: see DEFAULT_REPEAT_PENALTY.
        # The prompt-state cache (prefix_cache.py) lets each stage's call skip re-reading the prefix it
        # shares with the same stage's earlier calls; 0 turns it off. `prompt_states` also keeps one state
        # per stage prefix on disk (state_store.py), so the next process starts with them read.
        name = gguf_model_name(path)
        parallel = DEFAULT_PARALLEL if parallel is None else parallel
        stored = prompt_states and prompt_cache_bytes > 0
        shared: dict[str, Any] = {
            "n_ctx": n_ctx,
            "on_status": on_status,
            "constrained": constrained,
            "repeat_penalty": repeat_penalty,
        }
        engine: LlamaCppEngine
        if parallel > 1:
            # Opt-in: calls in flight decode together (batch_engine.py); finished sequences keep their
            # prefixes in the KV cache, and the disk store holds per-sequence states (not interchangeable
            # with the serial engine's whole-context ones, hence their own directory).
            engine = BatchedLlamaEngine(
                path,
                parallel=parallel,
                prompt_state_dir=prompt_state_dir(name + "-seq", n_ctx) if stored else None,
                reuse_prefixes=prompt_cache_bytes > 0,
                draft=draft,
                draft_jobs=draft_jobs,
                **shared,
            )
        else:
            engine = LlamaCppEngine(
                path,
                prompt_cache_bytes=prompt_cache_bytes,
                prompt_state_dir=prompt_state_dir(name, n_ctx) if stored else None,
                **shared,
            )
        # The decoding mode is part of the model name: DSPy's cache key sees the request, not the engine,
        # and grammar-constrained answers must never be served to an unconstrained run (or back). So is
        # the batched engine: its answers can differ from the serial one's in the last bits (several
        # sequences per decode step), and each engine's answers must be its own.
        decoding = (
            ("-grammar" if constrained else "")
            + (f"-rp{repeat_penalty:g}" if repeat_penalty != 1.0 else "")
            + ("-batched" if parallel > 1 else "")
        )
        return dspy.LM(
            name + decoding,
            engine=engine,
            async_engine=AsyncLlamaCppEngine(engine),
            num_retries=0,
            **common,
        )
    if not _MODEL_STRING.match(spec):
        raise _invalid(spec, "expected 'embedded', 'gguf:PATH' or 'provider/model'")
    # DSPy fetches a model-metadata map from GitHub on the first HTTP call (5 s timeout, a warning when
    # offline). The bundled snapshot is enough for a judge; a user's explicit setting still wins.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    kwargs: dict[str, object] = {**common, "num_retries": num_retries}
    if api_base:
        kwargs["api_base"] = api_base
    if api_key:
        kwargs["api_key"] = api_key
    elif api_base and spec.startswith("openai/"):
        kwargs["api_key"] = PLACEHOLDER_API_KEY
    if cache and (scope := cache_scope(api_base)) is not None:
        kwargs["rollout_id"] = scope
    with warnings.catch_warnings():
        # The warning is about bypassing the cache at temperature 0; here rollout_id is a cache scope.
        # It fires once per LM, at construction, so silencing it here silences it for this LM.
        warnings.filterwarnings("ignore", message=_ROLLOUT_WARNING)
        try:
            return dspy.LM(spec, **kwargs)
        except (ValueError, TypeError) as exc:
            raise _invalid(spec, str(exc).replace("\n", " ")) from exc


def is_local(spec: Any) -> bool:
    """Whether a backbone spec names a model run in-process by llama.cpp (embedded or gguf:PATH)."""
    return isinstance(spec, str) and (spec.strip() == "embedded" or spec.strip().startswith("gguf:"))


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


def check_backbone(spec: str, *, api_base: str | None = None, **options: Any) -> None:
    """Raise the BackboneError `make_lm` would, without loading or assembling any model.

    Run before anything is written, so a mistyped `--lm` never leaves a run directory behind. The
    packaged model is only checked for its runtime (assembling it is the slow part of its first use).
    """
    if isinstance(spec, str) and spec.strip() == "embedded":
        _check_repeat_penalty("embedded", options.get("repeat_penalty", DEFAULT_REPEAT_PENALTY))
        _check_parallel("embedded", options.get("parallel"))
        if api_base:
            raise BackboneError("--api-base applies to HTTP backbones only, not to 'embedded'; drop it")
        if not _llama_cpp_installed():
            raise BackboneError(
                "llama-cpp-python is not installed, so local GGUF models cannot run; "
                "pip install 'cejudge-dspy[embedded]' or use an HTTP backbone with --api-base"
            )
        return
    make_lm(spec, api_base=api_base, **options)


def preferred_adapter(spec: str) -> dspy.Adapter | None:
    """The adapter a backbone parses best with; None keeps DSPy's default (ChatAdapter + JSON fallback).

    Measured on the embedded 1.5B model: JSONAdapter with a schema-constrained decode parsed 5/5 typed
    outputs, ChatAdapter without its fallback 0/5 (it writes `[[ ## field ## ]] = B`). Local GGUF models
    decode under the schema in-process, so they get JSONAdapter; HTTP servers keep DSPy's default.
    """
    return dspy.JSONAdapter() if spec.strip() == "embedded" or spec.strip().startswith("gguf:") else None


@contextmanager
def use_backbone(spec: str = "embedded", **options: Any) -> Iterator[dspy.LM]:
    """Make a backbone current for a block: `with use_backbone("embedded"): judge(...)`.

    Uses `dspy.context` (safe in any thread), never `dspy.configure`; `options` go to `make_lm`.
    """
    lm = make_lm(spec, **options)
    adapter = preferred_adapter(spec)
    with dspy.context(lm=lm, **({"adapter": adapter} if adapter else {})):
        yield lm
