"""The JSON a run directory holds is strict JSON: no bare NaN or Infinity, which Python's json writes by
default and strict readers (jq, JavaScript's JSON.parse, most other languages) refuse.

A non-finite number in a record or a summary is a value that could not be computed (a correlation over one
item, a probability a broken server made NaN): it is written as null, which every reader reads as "none".
Every writer of results.jsonl, run.json and summary.json serialises through `strict_json`.
"""

from __future__ import annotations

import json
import math
from typing import Any


def finite(value: Any) -> Any:
    """A copy of a JSON-like value with every NaN and infinity replaced by None (containers walked; tuples
    become lists, as json writes them)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def strict_json(value: Any, **options: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, **options)` as strict JSON: non-finite numbers as null."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, **options)
    except ValueError:  # rare (a value nobody could compute): only then is the value walked
        return json.dumps(finite(value), ensure_ascii=False, allow_nan=False, **options)
