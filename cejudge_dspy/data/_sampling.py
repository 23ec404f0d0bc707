"""Stratified sampling of items by language, so a `limit` keeps every language's share."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

from cejudge_dspy.data._items import Item


def _stratum(item: Item) -> str:
    return f"{item.language}-{item.response_language}" if item.response_language else item.language


def stratified_sample(items: Sequence[Item], limit: int, seed: int = 42) -> list[Item]:
    """`limit` items, each language stratum in proportion to its size (largest remainder), at least one
    per stratum when `limit` allows; each stratum draws with its own seeded RNG, so adding a language
    leaves the others' picks unchanged; the result keeps the input order."""
    if limit >= len(items):
        return list(items)
    strata: dict[str, list[int]] = defaultdict(list)
    for index, item in enumerate(items):
        strata[_stratum(item)].append(index)
    keys, total = list(strata), len(items)
    alloc = {k: limit * len(strata[k]) // total for k in keys}
    by_rest = sorted(keys, key=lambda k: -(limit * len(strata[k]) % total))  # stable: file order breaks ties
    for k in by_rest[: limit - sum(alloc.values())]:
        alloc[k] += 1
    if limit >= len(keys):
        for k in (k for k in keys if alloc[k] == 0):
            # Take the seat from the stratum most over its exact share that can spare one.
            donor = max(
                (d for d in keys if alloc[d] > 1), key=lambda d: alloc[d] - limit * len(strata[d]) / total
            )
            alloc[donor] -= 1
            alloc[k] = 1
    chosen = [i for k in keys for i in random.Random(f"{seed}/{k}").sample(strata[k], alloc[k])]
    return [items[i] for i in sorted(chosen)]
