"""The prompt-state cache: longest-prefix lookup, LRU eviction by state bytes, logits not kept."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from cejudge_dspy.backbones.prefix_cache import PrefixStateCache, common_prefix


def state(size: int, rows: int = 4) -> SimpleNamespace:
    return SimpleNamespace(llama_state_size=size, scores=np.ones((rows, 8), dtype=np.float32))


@pytest.mark.parametrize(
    ("a", "b", "n"), [([1, 2, 3], [1, 2, 4], 2), ([1, 2], [1, 2, 3], 2), ([5], [6], 0), ([], [1], 0)]
)
def test_common_prefix(a: list[int], b: list[int], n: int) -> None:
    assert common_prefix(np.array(a), np.array(b)) == n


def test_lookup_returns_the_state_with_the_longest_shared_prefix() -> None:
    cache = PrefixStateCache(capacity_bytes=100)
    concepts, checklist = state(10), state(10)
    cache[[1, 2, 3, 4, 9]] = concepts  # an earlier "concepts" call: prompt + completion
    cache[[1, 7, 7, 7]] = checklist  # then another stage
    assert cache[[1, 2, 3, 5]] is concepts  # shares 3 tokens with the first, 1 with the second
    assert cache[[1, 7, 7, 0]] is checklist
    with pytest.raises(KeyError):
        cache[[8, 8]]
    assert (cache.hits, cache.misses) == (2, 1) and [1, 2] in cache and [8] not in cache


def test_states_keep_no_logits_buffer_and_eviction_counts_state_bytes() -> None:
    cache = PrefixStateCache(capacity_bytes=25)
    first = state(10)
    cache[[1]] = first
    assert first.scores.shape == (1, 8) and not first.scores.any()  # broadcasts in Llama.load_state
    cache[[2]] = state(10)
    cache[[1, 5]]  # touching the first makes the second the least recently used
    cache[[3]] = state(10)  # 30 bytes > 25: the least recently used goes
    assert cache.cache_size == 20 and [2] not in cache and cache[[1]] is first
