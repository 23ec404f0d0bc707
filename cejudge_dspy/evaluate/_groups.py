"""Which items travel together: one group per instruction, so its shared work is done once.

Items that share an instruction share its concepts and translation, so a group stays on one Ray worker
(_distributed.py) and in one `--shard` (cli/_evaluate.py). Kept out of _distributed.py so that sharding
does not load the Ray driver.
"""

from __future__ import annotations

from collections.abc import Sequence

from cejudge_dspy.data import Item


def group_key(item: Item) -> str:
    """What keeps items together: their group, else their instruction (MM-Eval prompts, LitEval sources
    repeat), so the instruction's shared work is computed once, on one worker. `--shard` uses it too."""
    return item.group or item.instruction


def groups_of(items: Sequence[Item]) -> list[list[Item]]:
    """The items grouped by `group_key`, groups in order of first appearance (so a run's records come
    roughly in data order)."""
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(group_key(item), []).append(item)
    return list(groups.values())
