"""The llama.cpp engine: DSPy's engine contract (`complete(Request) -> Response`) around one in-process
`llama_cpp.Llama`, whose `create_chat_completion` applies the GGUF's own chat template."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

from dspy import lm15
from dspy.clients.engines.base import validate_request

from cejudge_dspy.backbones.llamacpp._answer_scorer import SCORER_N_CTX, AnswerScorer
from cejudge_dspy.backbones.llamacpp._gguf import _HOW_TO_GET, StatusHook
from cejudge_dspy.backbones.llamacpp._prefix_cache import PrefixStateCache, lean_states, system_turn
from cejudge_dspy.backbones.llamacpp._requests import SAMPLING, chat_kwargs
from cejudge_dspy.backbones.llamacpp._runtime import chat_formatter, chat_prompt
from cejudge_dspy.backbones.llamacpp._state_store import StateStore
from cejudge_dspy.backbones.llamacpp._top_logprobs import TopLogprobs
from cejudge_dspy.errors import BackboneError

# A mild repeat penalty stops the 1.5B model's temperature-0 loops (measured: a pairwise item went from a
# truncated, unparsable judgment to a parsed one with 764 output tokens in all;
# docs/measurements/embedded-obvious-items.md).
DEFAULT_REPEAT_PENALTY = 1.1


class LlamaCppEngine:
    """DSPy engine around one in-process `llama_cpp.Llama`.

    The model loads on the first call (building an LM stays cheap). One lock serialises loading and
    generation: a `Llama` object is not thread-safe, and DSPy's threaded evaluators share one engine.
    """

    supports_response_schema = True  # JSONAdapter then sends a schema, which becomes a grammar
    supported_params = frozenset(
        SAMPLING + ("max_tokens", "stop", "response_format", "logprobs", "top_logprobs")
    )

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        on_status: StatusHook | None = None,
        llama_factory: Callable[..., Any] | None = None,
        prompt_cache_bytes: int = 0,
        prompt_state_dir: os.PathLike[str] | str | None = None,
        constrained: bool = True,
        repeat_penalty: float = 1.0,
    ) -> None:
        self.model_path = Path(model_path)
        # True: a requested JSON schema becomes a llama.cpp grammar (always parsable, but this build checks
        # every vocabulary entry at every step: measured 4-5x slower decoding for Qwen's 151k vocabulary;
        # docs/measurements/speed-and-cost.md). False: the schema is left to the prompt (DSPy's JSONAdapter
        # states it) and the stage's parse-and-retry handles a malformed answer.
        self.constrained = constrained
        # >1 discourages the loops small models fall into at temperature 0 (the same list item again and
        # again until max_tokens), which leave unparsable, truncated JSON after a minute of decoding.
        self.repeat_penalty = repeat_penalty
        self.n_ctx = n_ctx
        # >0: keep llama.cpp states of earlier prompts in RAM, so a call whose prompt starts like an
        # earlier one (same stage instructions) skips re-reading that prefix (_prefix_cache.py).
        self.prompt_cache_bytes = prompt_cache_bytes
        # With the cache on: also keep one state per stage prefix on disk, for the next process.
        self.prompt_state_dir = Path(prompt_state_dir) if prompt_state_dir else None
        self.n_threads = n_threads or os.cpu_count() or 1
        self.on_status = on_status
        self._factory = llama_factory  # tests inject a fake Llama
        self._llama: Any = None
        self._scorer: AnswerScorer | None = None  # built on the first answer_logprobs call
        self._cache: PrefixStateCache | None = None  # with prompt_cache_bytes > 0, once loaded
        self._formatter: Any = None  # the GGUF's chat template, with an on-disk store
        self._lock = threading.Lock()
        # Set to a list to record, per call and inside the lock, what llama.cpp did (benchmarks read it):
        # {"prompt", "evaluated" (prompt tokens not served by a reused prefix), "output", "seconds"}.
        self.call_log: list[dict[str, Any]] | None = None
        self._evaluated: list[int] = []

    def __deepcopy__(self, memo: dict[int, Any]) -> LlamaCppEngine:
        # Module.deepcopy() copies predictors with their LM; a loaded model is shared, never cloned.
        return self

    def _build(self, **kwargs: Any) -> Any:
        factory = self._factory
        if factory is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise BackboneError(f"llama-cpp-python is not installed; {_HOW_TO_GET}") from exc
            factory = Llama
        try:
            return factory(model_path=str(self.model_path), n_threads=self.n_threads, verbose=False, **kwargs)
        except (ValueError, RuntimeError, OSError) as exc:
            raise BackboneError(
                f"llama.cpp could not load '{self.model_path}' ({exc}); the file may be truncated or of an "
                f"unsupported architecture: use another --lm gguf:PATH or reinstall 'cejudge-dspy[embedded]'"
            ) from exc

    def _load_locked(self) -> Any:
        if self._llama is not None:
            return self._llama
        return self._announced(self._load_model)

    def _announced(self, load: Callable[[], Any]) -> Any:
        """Run `load`, telling `on_status` before and after (the CLI's spinner shows it)."""
        if self.on_status:
            self.on_status(f"loading {self.model_path.name}")
        start = time.perf_counter()
        loaded = load()
        if self.on_status:
            self.on_status(f"loaded {self.model_path.name} in {time.perf_counter() - start:.1f} s")
        return loaded

    def _load_model(self) -> Any:
        self._llama = self._build(n_ctx=self.n_ctx)
        if hasattr(self._llama, "eval"):
            self._llama.eval = self._counting(self._llama.eval)
        if self.prompt_cache_bytes > 0 and hasattr(self._llama, "set_cache"):
            store = StateStore(self.prompt_state_dir) if self.prompt_state_dir else None
            self._cache = PrefixStateCache(self.prompt_cache_bytes, store=store)
            self._llama.set_cache(self._cache)
            lean_states(self._llama)
            if store is not None:
                try:  # the template, to find each call's system turn (`_cover`)
                    self._formatter = chat_formatter(self._llama)
                except (AttributeError, KeyError, TypeError, ValueError):
                    self._formatter = None  # no chat template: the store keeps its plain rule
        return self._llama

    def _cover(self, llama: Any, messages: list[dict[str, str]]) -> int:
        """The tokens of this chat's system turn, which a stored prefix must cover for the prefix store
        not to start a new family (_state_store.py `wants`): a stage variant (an ablation, a tuned
        instruction) that parts from a stored prompt inside it gets a family of its own; 0 without a
        template."""
        if self._formatter is None:
            return 0

        def prompt_of(chat: list[dict[str, str]]) -> list[int]:
            return chat_prompt(llama, self._formatter, chat)[0]

        return system_turn(prompt_of, messages, prompt_of(messages))

    def _counting(self, evaluate: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """llama's `eval`, noting how many tokens each call reads: a completion's first call reads the
        prompt tokens no reused prefix covered, each later one a generated token."""

        def counted(tokens: Any) -> Any:
            self._evaluated.append(len(tokens))
            return evaluate(tokens)

        return counted

    def load(self) -> None:
        """Load the model now (e.g. behind a CLI spinner) instead of on the first call."""
        with self._lock:
            self._load_locked()

    def answer_logprobs(self, messages: list[dict[str, str]], answer: str) -> list[float]:
        """Token log probabilities of `answer` to the chat `messages` (_answer_scorer.py); the checks that
        read them (judges/_likelihood.py) find this method on the LM's engine. Serialised with generation:
        both instances share the cores."""
        with self._lock:
            if self._scorer is None:
                self._scorer = AnswerScorer(self._build(n_ctx=SCORER_N_CTX, logits_all=True))
            return self._scorer.logprobs(messages, answer)

    def complete(self, request: lm15.Request) -> lm15.Response:
        validate_request(request)  # DSPy's own check: no execution controls smuggled in extensions
        kwargs = chat_kwargs(request)
        if not self.constrained:
            kwargs.pop("response_format", None)
        if self.repeat_penalty != 1.0:
            kwargs["repeat_penalty"] = self.repeat_penalty
        recorder = TopLogprobs(request.config.logprobs or 1) if request.config.logprobs is not None else None
        if recorder is not None:
            kwargs["logits_processor"] = [recorder]
        with self._lock:
            llama = self._load_locked()
            self._evaluated = []
            if self._cache is not None and self._cache.store is not None:
                self._cache.cover = self._cover(llama, kwargs["messages"])
            started = time.perf_counter()
            try:
                raw = llama.create_chat_completion(**kwargs)
            except ValueError as exc:
                if "exceed context window" in str(exc):  # llama.cpp's wording for an over-long prompt
                    raise lm15.ContextLengthError(str(exc), provider="llamacpp") from exc
                raise
            if recorder is not None and raw.get("choices"):
                prompt_ids = [int(t) for t in getattr(llama, "_input_ids", [])[: recorder.n_prompt or 0]]
                content = recorder.content(
                    lambda ids, prev: llama.detokenize(ids, prev_tokens=prev), prompt_ids
                )
                raw["choices"][0] = {**raw["choices"][0], "logprobs": {"content": content, "refusal": None}}
            if self.call_log is not None:
                usage = raw.get("usage") or {}
                self.call_log.append(
                    {
                        "prompt": int(usage.get("prompt_tokens") or 0),
                        "evaluated": self._evaluated[0] if self._evaluated else 0,
                        "output": int(usage.get("completion_tokens") or 0),
                        "seconds": time.perf_counter() - started,
                        "system": kwargs["messages"][0]["content"] if kwargs["messages"] else "",
                    }
                )
        # llama reports its file path as the model; DSPy expects the LM's model name back.
        raw = {**raw, "model": request.model}
        return lm15.response_from_openai_chat(raw, model=request.model)

    def stream(self, request: lm15.Request) -> Iterator[Any]:
        # No token streaming: the judge never streams, and one event sequence keeps the contract.
        return lm15.response_to_events(self.complete(request))

    def close(self) -> None:
        with self._lock:
            llama, self._llama = self._llama, None
            scorer, self._scorer = self._scorer, None
        for model in (llama, scorer.llama if scorer else None):
            if model is not None and hasattr(model, "close"):
                model.close()


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
