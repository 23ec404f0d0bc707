"""The run record: one line of results.jsonl (`Record`), reading the lines back, and opening a run
directory with its records; with summary.json's timing, the one format every reader of a run uses.

A run directory holds `run.json` (what was run), `results.jsonl` (one record per finished item,
each written in one append so an interrupted run leaves only whole lines) and `summary.json`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cejudge_dspy.data import Item
from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.judges.verdicts import JudgeResult
from cejudge_dspy.runs._dir import RESULTS, open_run
from cejudge_dspy.runs._files import write_json_atomic
from cejudge_dspy.runs._identity import IDENTITY_KEYS

# What must match for a rerun to resume into the same directory: the whole identity (_dir.py).
RESUME_KEYS = IDENTITY_KEYS


@dataclass
class Record:
    """One line of results.jsonl: the item, its outcome and how long it took."""

    id: str
    task: str
    method: str
    status: str  # "ok" | "unparsed" | "error"
    item: Item
    result: JudgeResult | None
    error: str | None = None
    seconds: float = 0.0

    @property
    def label(self) -> Any:
        return self.item.label

    def to_dict(self) -> dict[str, Any]:
        """The results.jsonl line (field order as written since the first runs)."""
        return {
            "id": self.id,
            "task": self.task,
            "method": self.method,
            "status": self.status,
            "item": self.item.to_dict(),
            "result": self.result.to_dict() if self.result is not None else None,
            "error": self.error,
            "seconds": self.seconds,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Record:
        known = {f for f in cls.__dataclass_fields__}
        fields = {k: v for k, v in data.items() if k in known}
        fields["item"] = Item.from_dict(fields["item"])
        fields["result"] = JudgeResult.from_dict(fields["result"]) if fields.get("result") else None
        return cls(**fields)


def read_records(path: Path) -> list[Record]:
    """Read results.jsonl; a torn last line (killed mid-write) is ignored, a corrupt earlier one is not."""
    if not path.exists():
        return []
    records: list[Record] = []
    lines = path.read_bytes().split(b"\n")  # the last element is b"" when the file ends with a newline
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise TypeError(f"expected a JSON object, got {type(data).__name__}")
            records.append(Record.from_dict(data))
        except (ValueError, TypeError) as exc:
            if n == len(lines):
                break  # no newline after it: a write that did not finish
            raise CEJudgeError(
                f"{path}:{n}: corrupt record ({' '.join(str(exc).split())[:120]}); "
                "remove the line, or use --force-new or another --out"
            ) from None
    return records


def prepare_run_dir(out: Path, config: dict[str, Any], *, force_new: bool = False) -> list[Record]:
    """Create or reopen a run directory for `config` (see _dir.open_run) and read its records.

    Callers that may run concurrently hold `runs.lock(out)` around this and the judging."""
    open_run(out, config, force_new=force_new)
    return read_records(out / RESULTS)


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    """summary.json, replaced atomically (a reader never sees half of it)."""
    write_json_atomic(path, summary)


def run_timing(previous: dict[str, Any] | None, started: float, finished: float) -> dict[str, Any]:
    """When a run was judged: its first start, its last finish (UTC, ISO 8601), the wall time summed over
    its sessions and how many there were; `previous` is the timing an earlier session wrote."""

    def iso(t: float) -> str:
        return datetime.fromtimestamp(t, tz=timezone.utc).isoformat(timespec="seconds")

    previous = previous if isinstance(previous, dict) else {}
    return {
        "started": previous.get("started") or iso(started),
        "finished": iso(finished),
        "wall_seconds": round(float(previous.get("wall_seconds") or 0.0) + (finished - started), 3),
        "sessions": int(previous.get("sessions") or 0) + 1,
    }


def read_timing(path: Path) -> dict[str, Any] | None:
    """The `timing` of an existing summary.json (None when there is none or it cannot be read)."""
    try:
        timing = json.loads(path.read_text(encoding="utf-8")).get("timing")
    except (OSError, ValueError, AttributeError):
        return None
    return timing if isinstance(timing, dict) else None
