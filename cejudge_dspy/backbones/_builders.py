"""One `dspy.LM` builder per backbone kind: an HTTP model string, a local GGUF file (embedded or gguf:PATH,
served by llama.cpp's own server and then built as an HTTP model string), simulated.

`make_lm` (`_spec.py`) validates the spec and the options, then calls one of these. `common` is the
keyword arguments every kind passes to `dspy.LM`: temperature, max_tokens, seed and cache.

Cache scoping. DSPy's response cache key is the request (model string, messages, sampling options)
with `api_key`, `api_base` and `base_url` removed, so two servers serving the same model name would
share cached answers. `rollout_id` is the one field that is part of the key yet stripped before the
request is sent (`dspy.clients.execution._canonical` drops it; the LiteLLM path pops it). An HTTP
backbone with an `api_base` therefore gets a `rollout_id` derived from the normalised address. Local
models are scoped by their file's fingerprint and decoding settings instead of their (per-process) address.

An HTTP backbone with an `api_base` may also score a given text through that server, if its one probe finds
the server can (llama.cpp's can): `make_lm` declares its `ServerScorer` among its capabilities
(`_capabilities.declare`).
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

from cejudge_dspy.backbones._local_server import (
    DEFAULT_N_CTX,
    DEFAULT_SLOTS,
    ServerConfig,
    local_server,
)
from cejudge_dspy.backbones._model_file import StatusHook, cache_dir, check_gguf, resolve_gguf
from cejudge_dspy.backbones._options import DEFAULT_REPEAT_PENALTY, DEFAULT_TIMEOUT_S
from cejudge_dspy.backbones._progress import watch
from cejudge_dspy.backbones._prompt_states import keep, prompt_state_dir
from cejudge_dspy.backbones._provider import LLAMA_SERVER, is_llama_server, register_llama_server
from cejudge_dspy.backbones._server_lm import ServerLM
from cejudge_dspy.backbones._slots import hold_to_slots
from cejudge_dspy.backbones._spec_checks import invalid_spec

LOCAL_PROVIDER = "llamacpp-local"  # the fingerprinted name's prefix (`gguf_model_name`)
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
    scope: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    constrained: bool = False,
) -> dspy.LM:
    """A model string (`provider/model`), optionally at `api_base`, scoped in the cache per server.

    A `ServerLM` (`_server_lm.py`): an answer cut at the token budget is never read as whole, and no call
    waits longer than `timeout` seconds. `scope`: what names the server in DSPy's cache instead of its
    address (a local server's model file and settings: its port changes from process to process, its
    answers do not)."""
    if not _MODEL_STRING.match(spec):
        raise invalid_spec(spec, "expected 'embedded', 'gguf:PATH' or 'provider/model'")
    if is_llama_server(spec):
        register_llama_server()
    # DSPy fetches a model-metadata map from GitHub on the first HTTP call (5 s timeout, a warning when
    # offline). The bundled snapshot is enough for a judge; a user's explicit setting still wins.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    kwargs: dict[str, object] = {**common, "num_retries": num_retries, "timeout": timeout}
    if api_base:
        kwargs["api_base"] = api_base
    if api_key:
        kwargs["api_key"] = api_key
    elif api_base and (spec.startswith("openai/") or is_llama_server(spec)):
        # As litellm does, OPENAI_API_KEY when set (a hosted router wants it); else a placeholder.
        kwargs["api_key"] = os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_API_KEY
    if api_base and spec.startswith("openai/") and common.get("max_tokens"):
        # litellm sends an `openai/` model's budget as `max_completion_tokens` alone, which llama.cpp's
        # server ignores (a looping model then decodes to the context limit); OpenAI-compatible servers
        # all read `max_tokens`, so it goes in the body too.
        kwargs["extra_body"] = {"max_tokens": common["max_tokens"]}
    if common.get("cache", True) and (rollout := cache_scope(scope or api_base)) is not None:
        kwargs["rollout_id"] = rollout
    with warnings.catch_warnings():
        # The warning is about bypassing the cache at temperature 0; here rollout_id is a cache scope.
        # It fires once per LM, at construction, so silencing it here silences it for this LM.
        warnings.filterwarnings("ignore", message=_ROLLOUT_WARNING)
        try:
            lm = ServerLM(spec, **kwargs)
        except (ValueError, TypeError) as exc:
            raise invalid_spec(spec, str(exc).replace("\n", " ")) from exc
    lm.timeout_s = timeout
    if is_llama_server(spec):  # llama.cpp's server takes a schema; sent only when decoding is constrained
        lm.send_schema = constrained
    return lm


@dataclass(frozen=True)
class LocalOptions:
    """How a local GGUF model is served; the fields are `make_lm`'s options of the same names."""

    on_status: StatusHook | None = None
    n_ctx: int = DEFAULT_N_CTX
    constrained: bool = False
    repeat_penalty: float = DEFAULT_REPEAT_PENALTY
    parallel: int | None = None


def build_embedded(
    local: LocalOptions, common: Mapping[str, Any], num_retries: int, timeout: float = DEFAULT_TIMEOUT_S
) -> dspy.LM:
    """The packaged model (or the file `CEJUDGE_GGUF` names), assembled on first use, served by llama.cpp."""
    return _local_lm(resolve_gguf(on_status=local.on_status), local, common, num_retries, timeout)


def build_gguf(
    path: str | os.PathLike[str],
    local: LocalOptions,
    common: Mapping[str, Any],
    num_retries: int,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> dspy.LM:
    """A local GGUF file behind llama.cpp's server; BackboneError when it is missing or not a GGUF file."""
    return _local_lm(check_gguf(Path(path), "path"), local, common, num_retries, timeout)


def _local_lm(
    path: Path, local: LocalOptions, common: Mapping[str, Any], num_retries: int, timeout: float
) -> dspy.LM:
    """Start (or reuse) this process's llama.cpp server for the file, and reach it as any user's server is
    reached: `llama-server/<name>` at its address, through `build_http`."""
    name = gguf_model_name(path).split("/", 1)[1]
    slots = DEFAULT_SLOTS if local.parallel is None else local.parallel
    # Stage prefixes kept across processes (_prompt_states.py): with one slot, whose content is known.
    states = prompt_state_dir(path, cache_dir().parent) if slots == 1 else None
    config = ServerConfig(
        model=str(path), alias=name, slots=slots, n_ctx=local.n_ctx, repeat_penalty=local.repeat_penalty,
        states=None if states is None else str(states),
    )  # fmt: skip
    server = local_server(config, local.on_status)
    hold_to_slots(server.api_base, slots)  # the judge's own calls queue here, not at the server (_slots.py)
    watch(server.api_base, server.pid)  # and end when it stops working, not when time passes (_progress.py)
    if states is not None:
        keep(server.api_base, states)
    # The decoding settings are part of the model name: DSPy's cache key sees the request, not the server,
    # and a run with another repeat penalty must never be served the other's answers. (Whether a schema was
    # sent is in the request, hence in the key.) The slots are not: each sequence decodes on its own.
    decoding = f"-rp{local.repeat_penalty:g}" if local.repeat_penalty != 1.0 else ""
    spec = f"{LLAMA_SERVER}/{name}{decoding}"
    return build_http(
        spec,
        api_base=server.api_base,
        api_key=None,
        num_retries=num_retries,
        common=common,
        scope=f"local:{name}{decoding}",
        timeout=timeout,
        constrained=local.constrained,
    )
