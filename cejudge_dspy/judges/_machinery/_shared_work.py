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
from collections.abc import Awaitable, Callable, Hashable
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
        self._done: LRUCache[Hashable, Any] = LRUCache(maxsize=maxsize)
        self._inflight: dict[Hashable, asyncio.Future[Any]] = {}
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
    def key(stage: str, module: dspy.Module, inputs: dict[str, Any]) -> Hashable:
        # A stage has one predictor; `named_predictors()` walks every attribute (DSPy's call history
        # included), which made each call slower as a run grew. A signature is a class: a tuned or
        # loaded one is a new class, and an instruction changed in place changes its `__doc__`.
        own = getattr(module, "predict", None)
        predictors = [own] if isinstance(own, dspy.Predict) else [p for _, p in module.named_predictors()]
        prompts = tuple((p.signature, p.signature.__doc__, len(p.demos)) for p in predictors)
        lm = dspy.settings.lm
        # A tuple, not a digest of its JSON: hashing reuses each text's cached hash (a fifth of the
        # cost of a shared-work lookup went to json.dumps + sha256).
        return (stage, prompts, getattr(lm, "model", None), id(lm), _frozen(inputs))


def _frozen(value: Any) -> Hashable:
    """`value` as a hashable key: JSON-like containers as tuples, scalars other than text tagged with their
    type (so 1, 1.0 and True stay apart, as JSON kept them), anything else by its type and repr."""
    if type(value) is str:
        return value
    if isinstance(value, (list, tuple)):
        return ("[", *(_frozen(v) for v in value))
    if isinstance(value, dict):
        return ("{", *sorted((str(k), _frozen(v)) for k, v in value.items()))
    if value is None or isinstance(value, (bool, int, float, str)):
        return (type(value).__name__, value)
    return (type(value).__qualname__, repr(value))
