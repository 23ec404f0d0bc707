"""A cache of llama.cpp states keyed by token prefix, so a call re-reads only what differs from an
earlier prompt.

Why: a CE-Judge item makes 10-14 calls that alternate between stages (concepts, translation, the two
checklists, grades, verdicts). Every stage's prompt starts with the same few hundred tokens (the
adapter's field list and the stage's instruction, then the task's wording), but llama.cpp reuses
only the *previous* prompt's prefix, and the previous call was almost always another stage: measured,
consecutive prompts shared 11-35 tokens, and about 70% of an item's time was prompt reading.
Restoring the state of the most similar earlier prompt first turns that into a prefix of hundreds.

llama-cpp-python's own `LlamaRAMCache` does the lookup, but every state it keeps also holds a copy
of the model's logits buffer (n_batch x vocabulary floats: 311 MB for Qwen's 151,936 tokens),
uncounted by its capacity. Those logits are never needed: llama.cpp re-evaluates at least the last
prompt token after a restore, so sampling always starts from fresh logits. This cache keeps a
one-row stand-in instead (it broadcasts in `Llama.load_state`) and counts the state bytes it keeps.

With a `StateStore` (_state_store.py) the cache also keeps one state per prefix family on disk and
starts from those, so a fresh process does not re-read every stage's prefix.

The interface is the one `Llama.set_cache` expects of `llama_cpp.BaseLlamaCache`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cejudge_dspy.backbones.llamacpp._state_store import StateStore

DEFAULT_PROMPT_CACHE_BYTES = 1 << 30  # about 40-60 prompt states of the 1.5B model (~28 KB per token)


def common_prefix(a: Sequence[int] | np.ndarray, b: Sequence[int] | np.ndarray) -> int:
    """The number of leading tokens two token sequences share (lists or arrays)."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    differ = np.flatnonzero(np.asarray(a[:n]) != np.asarray(b[:n]))
    return int(differ[0]) if len(differ) else n


def system_turn(
    prompt_of: Callable[[list[dict[str, str]]], Sequence[int]],
    messages: list[dict[str, str]],
    prompt: Sequence[int],
) -> int:
    """How many leading tokens of `prompt` (the chat `messages`, tokenised by `prompt_of`) its system
    message accounts for (0 without one): the chat with that message alone parts from the whole chat
    where the next turn begins. The prefix store's `cover` (_state_store.py)."""
    if not messages or messages[0].get("role") != "system" or len(messages) == 1:
        return 0
    return common_prefix(prompt, prompt_of(messages[:1]))


class PrefixStateCache:
    """Least-recently-used llama.cpp states, looked up by the longest shared token prefix."""

    def __init__(
        self, capacity_bytes: int = DEFAULT_PROMPT_CACHE_BYTES, store: StateStore | None = None
    ) -> None:
        self.capacity_bytes = capacity_bytes
        self.store = store
        self._states: OrderedDict[tuple[int, ...], tuple[np.ndarray, Any]] = OrderedDict()
        self.hits = 0
        self.misses = 0
        self.loaded = 0  # states read from the store
        # The system turn of the call in progress, set by the serial engine before each call (it runs
        # one at a time): a state is stored as a new family unless a stored one covers it.
        self.cover = 0

    @property
    def cache_size(self) -> int:
        return sum(int(state.llama_state_size) for _, state in self._states.values())

    def _longest(self, key: Sequence[int]) -> tuple[tuple[int, ...] | None, int]:
        tokens = np.asarray(key, dtype=np.int64)
        best, best_len = None, 0
        for k, (array, _) in self._states.items():
            shared = common_prefix(array, tokens)
            if shared > best_len:
                best, best_len = k, shared
        if self.store is not None:
            path, stored_len = self.store.longest(tokens, common_prefix)
            if path is not None and stored_len > best_len and (state := self.store.load(path)) is not None:
                self.loaded += 1
                best, best_len = self._keep(state), stored_len
        return best, best_len

    def __contains__(self, key: Sequence[int]) -> bool:
        return self._longest(key)[0] is not None

    def __getitem__(self, key: Sequence[int]) -> Any:
        found, _ = self._longest(key)
        if found is None:
            self.misses += 1
            raise KeyError("no cached prompt shares a prefix")
        self.hits += 1
        self._states.move_to_end(found)
        return self._states[found][1]

    def __setitem__(self, key: Sequence[int], state: Any) -> None:
        scores = getattr(state, "scores", None)
        if isinstance(scores, np.ndarray) and scores.ndim == 2 and scores.shape[0] > 1:
            state.scores = np.zeros((1, scores.shape[1]), dtype=scores.dtype)  # see the module docstring
        tokens = self._keep(state, key)
        store = self.store
        if store is not None and store.wants(self._states[tokens][0], common_prefix, self.cover):
            store.save(state)

    def _keep(self, state: Any, key: Sequence[int] | None = None) -> tuple[int, ...]:
        """Keep a state in RAM under its tokens (a stored state's own, when no key is given)."""
        if key is None:
            key = state.input_ids[: state.n_tokens]
        tokens = tuple(int(t) for t in key)
        self._states.pop(tokens, None)
        self._states[tokens] = (np.asarray(tokens, dtype=np.int64), state)
        while self.cache_size > self.capacity_bytes and len(self._states) > 1:
            self._states.popitem(last=False)
        return tokens


def lean_states(llama: Any) -> None:
    """Make `llama.save_state` / `load_state` skip the logits buffer (a `llama_cpp.Llama` built without
    `logits_all`).

    Why: both copy `llama.scores` (n_batch x vocabulary floats, 311 MB for Qwen) on every call whose state
    the cache keeps or restores; measured 0.2-1.4 s to save and 0.25-2.9 s to load a 600-token state on
    2 cores (benchmarks/experiments/bench_state_copy.py). Without `logits_all` llama.cpp samples inside its
    own sampler and never writes or reads that buffer, so both run on a one-row view of it instead; the
    llama.cpp state (KV cache) is saved and restored as before.
    """
    if getattr(llama, "_logits_all", True) or not hasattr(llama, "scores"):
        return
    save, load = llama.save_state, llama.load_state

    def on_one_row(method: Any) -> Any:
        def call(*args: Any) -> Any:
            full = llama.scores
            llama.scores = full[:1]
            try:
                return method(*args)
            finally:
                llama.scores = full

        return call

    llama.save_state, llama.load_state = on_one_row(save), on_one_row(load)
