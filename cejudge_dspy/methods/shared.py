"""Work shared across responses and items: one stage result per unique input.

LitEval repeats a source across several translations and MM-Eval repeats prompts; the instruction's
concepts and translation are the same for all of them. `SharedWork` keeps one in-flight future per
key, so concurrent requests for the same text wait for one LM call instead of issuing their own.
The key includes the stage's current instructions and the LM in use, so a tuned program or another
backbone never receives a stale answer. Finished results are kept in a bounded LRU memo: shared work is
the instruction side (a few texts reused by many items), so a long run must not keep every response's.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import dspy
from cachetools import LRUCache

from cejudge_dspy.usage import note_reused

T = TypeVar("T")


class SharedWork:
    """A per-program memo of stage results keyed by (stage, its prompt, LM, inputs)."""

    def __init__(self, maxsize: int = 4096) -> None:
        # Finished results outlive event loops (`forward` runs each call on a fresh loop);
        # in-flight futures belong to the loop that created them.
        self._done: LRUCache[str, Any] = LRUCache(maxsize=maxsize)
        self._inflight: dict[str, asyncio.Future[Any]] = {}
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._done)

    def clear(self) -> None:
        self._done.clear()
        self._inflight.clear()
        self.hits = self.misses = 0

    async def get(
        self, stage: str, module: dspy.Module, inputs: dict[str, Any], compute: Callable[[], Awaitable[T]]
    ) -> T:
        key = self.key(stage, module, inputs)
        loop = asyncio.get_running_loop()
        if key in self._done:
            self.hits += 1
            note_reused(stage)
            return self._done[key]
        future = self._inflight.get(key)
        if future is not None and future.get_loop() is loop:
            self.hits += 1
            note_reused(stage)
            return await asyncio.shield(future)
        self.misses += 1
        future = loop.create_future()
        self._inflight[key] = future
        try:
            result = await compute()
        except BaseException as exc:
            # Failures are not shared with later requests (they retry), only with current waiters.
            future.set_exception(exc)
            future.exception()  # mark retrieved so asyncio does not warn when nobody waits
            raise
        else:
            future.set_result(result)
            self._done[key] = result
            return result
        finally:
            self._inflight.pop(key, None)

    @staticmethod
    def key(stage: str, module: dspy.Module, inputs: dict[str, Any]) -> str:
        # A stage has one predictor; `named_predictors()` walks every attribute (DSPy's call history
        # included), which made each call slower as a run grew.
        own = getattr(module, "predict", None)
        predictors = [own] if isinstance(own, dspy.Predict) else [p for _, p in module.named_predictors()]
        prompts = [(p.signature.instructions, len(p.demos)) for p in predictors]
        lm = dspy.settings.lm
        lm_id = f"{getattr(lm, 'model', None)}@{id(lm)}"
        blob = json.dumps([stage, prompts, lm_id, inputs], sort_keys=True, default=str, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()
