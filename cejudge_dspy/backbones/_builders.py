"""One `dspy.LM` builder per backbone kind: embedded, a GGUF file, an HTTP model string, simulated.

`make_lm` (`_spec.py`) validates the spec and the options, then calls one of these. `common` is the
keyword arguments every kind passes to `dspy.LM`: temperature, max_tokens, seed and cache.

Cache scoping. DSPy's response cache key is the request (model string, messages, sampling options)
with `api_key`, `api_base` and `base_url` removed, so two servers serving the same model name would
share cached answers. `rollout_id` is the one field that is part of the key yet stripped before the
request is sent (`dspy.clients.execution._canonical` drops it; the LiteLLM path pops it). An HTTP
backbone with an `api_base` therefore gets a `rollout_id` derived from the normalised address. Local
models need no scope: their model name carries a fingerprint of the file.

An HTTP backbone with an `api_base` also carries a `server_scorer` (`_http_scoring.ServerScorer`): the way
to score a given text through that server, if its one probe finds the server can (llama.cpp's can).
"""

from __future__ import annotations

import hashlib
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dspy

from cejudge_dspy.backbones._http_scoring import ServerScorer
from cejudge_dspy.backbones._server_lm import DEFAULT_TIMEOUT_S, ServerLM
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

EXAMPLES = (
    "'embedded', 'gguf:/models/model.gguf', 'hosted_vllm/Qwen/Qwen2.5-7B-Instruct' with --api-base "
    "http://HOST:PORT/v1, 'openai/gpt-4o-mini', 'ollama_chat/qwen2.5:7b', 'simulated:50' (benchmarks)"
)
LOCAL_PROVIDER = "llamacpp-local"
PLACEHOLDER_API_KEY = "sk-no-key-required"  # local OpenAI-compatible servers ignore it; lm15 wants one
_MODEL_STRING = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/\S+$")
_ROLLOUT_WARNING = "rollout_id has no effect when temperature=0"


def invalid_spec(spec: object, why: str) -> BackboneError:
    return BackboneError(f"invalid backbone {spec!r}: {why}; valid examples: {EXAMPLES}")


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


def build_simulated(spec: str, *, api_base: str | None, common: Mapping[str, Any]) -> dspy.LM:
    """The latency-simulating backbone for benchmarks (`simulated[:...]`, see `_simulated.py`)."""
    from cejudge_dspy.backbones._simulated import simulated_lm

    return simulated_lm(spec, api_base=api_base, **common)


def build_http(
    spec: str,
    *,
    api_base: str | None,
    api_key: str | None,
    num_retries: int,
    common: Mapping[str, Any],
    timeout: float = DEFAULT_TIMEOUT_S,
) -> dspy.LM:
    """A LiteLLM model string (`provider/model`), optionally at `api_base`, scoped in the cache per server.
    A `ServerLM` (`_server_lm.py`): an answer cut at the token budget is never read as whole, and no call
    waits longer than `timeout` seconds."""
    if not _MODEL_STRING.match(spec):
        raise invalid_spec(spec, "expected 'embedded', 'gguf:PATH' or 'provider/model'")
    # DSPy fetches a model-metadata map from GitHub on the first HTTP call (5 s timeout, a warning when
    # offline). The bundled snapshot is enough for a judge; a user's explicit setting still wins.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    kwargs: dict[str, object] = {**common, "num_retries": num_retries, "timeout": timeout}
    if api_base:
        kwargs["api_base"] = api_base
    if api_key:
        kwargs["api_key"] = api_key
    elif api_base and spec.startswith("openai/"):
        # As litellm does, OPENAI_API_KEY when set (a hosted router wants it); else a placeholder.
        kwargs["api_key"] = os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_API_KEY
    if api_base and spec.startswith("openai/") and common.get("max_tokens"):
        # litellm sends an `openai/` model's budget as `max_completion_tokens` alone, which llama.cpp's
        # server ignores (a looping model then decodes to the context limit); OpenAI-compatible servers
        # all read `max_tokens`, so it goes in the body too.
        kwargs["extra_body"] = {"max_tokens": common["max_tokens"]}
    if common.get("cache", True) and (scope := cache_scope(api_base)) is not None:
        kwargs["rollout_id"] = scope
    with warnings.catch_warnings():
        # The warning is about bypassing the cache at temperature 0; here rollout_id is a cache scope.
        # It fires once per LM, at construction, so silencing it here silences it for this LM.
        warnings.filterwarnings("ignore", message=_ROLLOUT_WARNING)
        try:
            lm = ServerLM(spec, **kwargs)
        except (ValueError, TypeError) as exc:
            raise invalid_spec(spec, str(exc).replace("\n", " ")) from exc
    lm.timeout_s = timeout
    if api_base:
        # A server the user runs may score a given text (the likelihood tie-breaker and check): asked once,
        # on first use (`_http_scoring.ServerScorer.probe`). A hosted API without api_base is never probed.
        key = str(kwargs.get("api_key") or "")
        lm.server_scorer = ServerScorer(api_base, spec.split("/", 1)[1], key, timeout)
    return lm


@dataclass(frozen=True)
class LocalOptions:
    """How a local GGUF model decodes; the fields are `make_lm`'s options of the same names."""

    on_status: StatusHook | None = None
    n_ctx: int = 8192
    constrained: bool = False
    repeat_penalty: float = DEFAULT_REPEAT_PENALTY
    prompt_cache_bytes: int = DEFAULT_PROMPT_CACHE_BYTES
    prompt_states: bool = True
    parallel: int | None = None
    draft: bool = True
    draft_jobs: int = DRAFT_JOBS


def build_embedded(local: LocalOptions, common: Mapping[str, Any]) -> dspy.LM:
    """The packaged model (or the file `CEJUDGE_GGUF` names), assembled on first use, run in-process."""
    return _local_lm(resolve_gguf(on_status=local.on_status), local, common)


def build_gguf(path: str | os.PathLike[str], local: LocalOptions, common: Mapping[str, Any]) -> dspy.LM:
    """A local GGUF file run in-process; BackboneError when it is missing or not a GGUF file."""
    return _local_lm(check_gguf(Path(path), "path"), local, common)


def _local_lm(path: Path, local: LocalOptions, common: Mapping[str, Any]) -> dspy.LM:
    name = gguf_model_name(path)
    parallel = DEFAULT_PARALLEL if local.parallel is None else local.parallel
    engine = _local_engine(path, name, local, parallel)
    # The decoding mode is part of the model name: DSPy's cache key sees the request, not the engine,
    # and grammar-constrained answers must never be served to an unconstrained run (or back). So is
    # the batched engine: its answers can differ from the serial one's in the last bits (several
    # sequences per decode step), and each engine's answers must be its own.
    decoding = (
        ("-grammar" if local.constrained else "")
        + (f"-rp{local.repeat_penalty:g}" if local.repeat_penalty != 1.0 else "")
        + ("-batched" if parallel > 1 else "")
    )
    return dspy.LM(
        name + decoding,
        engine=engine,
        async_engine=AsyncLlamaCppEngine(engine),
        num_retries=0,
        **common,
    )


def _local_engine(path: Path, name: str, local: LocalOptions, parallel: int) -> LlamaCppEngine:
    # Grammar-constrained decoding is opt-in: measured 4-5x slower per token on 2 cores (llama.cpp
    # checks the whole vocabulary each step; docs/measurements/speed-and-cost.md), while JSONAdapter's prompt
    # alone parsed here.
    # The repeat penalty: see DEFAULT_REPEAT_PENALTY.
    # The prompt-state cache (llamacpp/_prefix_cache.py) lets each stage's call skip re-reading the prefix it
    # shares with the same stage's earlier calls; 0 turns it off. `prompt_states` also keeps one state
    # per stage prefix on disk (llamacpp/_state_store.py), so the next process starts with them read.
    stored = local.prompt_states and local.prompt_cache_bytes > 0
    shared: dict[str, Any] = {
        "n_ctx": local.n_ctx,
        "on_status": local.on_status,
        "constrained": local.constrained,
        "repeat_penalty": local.repeat_penalty,
    }
    if parallel > 1:
        # Opt-in: calls in flight decode together (llamacpp/_batch_engine.py); finished sequences keep their
        # prefixes in the KV cache, and the disk store holds per-sequence states (not interchangeable
        # with the serial engine's whole-context ones, hence their own directory).
        return BatchedLlamaEngine(
            path,
            parallel=parallel,
            prompt_state_dir=prompt_state_dir(name + "-seq", local.n_ctx) if stored else None,
            reuse_prefixes=local.prompt_cache_bytes > 0,
            draft=local.draft,
            draft_jobs=local.draft_jobs,
            **shared,
        )
    return LlamaCppEngine(
        path,
        prompt_cache_bytes=local.prompt_cache_bytes,
        prompt_state_dir=prompt_state_dir(name, local.n_ctx) if stored else None,
        **shared,
    )
