"""What a log probability may be, checked wherever a backbone's are read.

A log probability is a finite number at most 0. A broken server sent NaN, +5 and Infinity, and each was
taken: NaN decided verdicts (`p_a` NaN, then a bare NaN in results.jsonl), +5 made a probability of 148.
Every reader (the judges' token reading, `backbones check`'s probe, the HTTP scorer) asks `logprob_problem`
or `logprobs_problem` and treats an answer with an impossible value as one without probabilities, with the
reason; nothing computes with it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def logprob_problem(value: Any) -> str | None:
    """Why `value` is not a log probability (a finite number <= 0), or None when it is one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"a log probability of {value!r} is not a number"
    if not math.isfinite(value):
        return f"a log probability of {value!r} is not finite"
    if value > 0:
        return f"a log probability of {value!r} is above 0 (a probability above 1)"
    return None


def logprobs_problem(logprobs: Any) -> str | None:
    """The first impossible value among a chat answer's token log probabilities (OpenAI's shape,
    `{"content": [{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}]}`, dicts or attribute
    dicts), with its token; None when every value is a log probability (or there are none)."""
    for entry in _get(logprobs, "content") or ():
        token = _get(entry, "token")
        values = [_get(entry, "logprob")]
        values += [_get(alt, "logprob") for alt in _get(entry, "top_logprobs") or ()]
        for value in values:
            if value is not None and (why := logprob_problem(value)):
                return f"{why}, at the token {token!r}"
    return None


def checked_logprob(value: Any, where: str) -> float:
    """`value` as a float, or ValueError saying why it is no log probability and `where` it was read."""
    why = logprob_problem(value)
    if why:
        raise ValueError(f"{why} ({where})")
    return float(value)


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)
