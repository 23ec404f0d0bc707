"""Reading a ranking run back: its ranking.json, for `cejudge view` and anyone else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import CEJudgeError

_NAME = "ranking.json"


def read_ranking(out: str | Path) -> dict[str, Any] | None:
    """The ranking a run directory holds (None when it holds none); an unreadable file is one line."""
    path = Path(out) / _NAME
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CEJudgeError(f"{path} is unreadable ({exc}); rerun `cejudge rank` into it") from None
    if not isinstance(data, dict) or "systems" not in data:
        raise CEJudgeError(f"{path} is not a ranking; rerun `cejudge rank` into it")
    return data
