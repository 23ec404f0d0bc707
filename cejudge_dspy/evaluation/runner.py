"""`cejudge evaluate`: judge items concurrently, write each record as it finishes, resume on rerun.

A run directory holds `run.json` (what was run), `results.jsonl` (one record per finished item,
each written in one append so an interrupted run leaves only whole lines) and `summary.json`.
A rerun with the same configuration skips the items already recorded; records with status "error"
(an exception, not a parse failure) are retried. Unparsed outcomes are final: they are results.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import dspy

from cejudge_dspy.errors import BackboneError, CEJudgeError, InputError
from cejudge_dspy.evaluation.redact import redact
from cejudge_dspy.evaluation.run_dir import (
    IDENTITY_KEYS,
    RESULTS,
    RUN,  # noqa: F401 - re-exported for compare, merge and older callers
    SUMMARY,  # noqa: F401
    RunWriteError,
    append_record,
    open_run,
    write_json_atomic,
)
from cejudge_dspy.evaluation.writer import RecordWriter
from cejudge_dspy.items import Item
from cejudge_dspy.methods.runtime import judging_run  # issue 14: no DSPy call history, GC tuned
from cejudge_dspy.results import JudgeResult

# What must match for a rerun to resume into the same directory: the whole identity (run_dir.py).
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


@dataclass
class RunProgress:
    """Counts the progress display reads after every item."""

    total: int
    done: int = 0
    skipped: int = 0
    unparsed: int = 0
    errors: int = 0
    calls: int = 0
    started: float = field(default_factory=time.monotonic)


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
    """Create or reopen a run directory for `config` (see run_dir.open_run) and read its records.

    Callers that may run concurrently hold `run_dir.lock(out)` around this and the judging."""
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


def pending_items(items: Sequence[Item], records: Sequence[Record]) -> list[Item]:
    done = {r.id for r in records if r.status != "error"}
    return [item for item in items if item.id not in done]


async def judge_one(item: Item, program: Any, *, task: str, method: str) -> Record:
    """Judge one item into its record, timed. A parse failure is an "unparsed" record and any other
    exception an "error" record; a backbone that cannot be reached raises BackboneError (every item would
    fail, so the run stops). The local runner and each Ray worker (distributed.py) call this per item."""
    start = time.monotonic()
    try:
        pred = await program.acall(**item.inputs())
        result: JudgeResult = pred.result
        record = Record(item.id, task, method, result.status, item, result)
    except BackboneError:
        raise
    except Exception as exc:  # recorded per item; the run goes on
        explained = _explain(exc)
        if isinstance(explained, BackboneError):
            raise explained from exc
        record = Record(item.id, task, method, "error", item, None, error=str(explained))
    record.seconds = round(time.monotonic() - start, 3)
    return record


def write_record(path: Path, record: Record, secrets: Sequence[str] | None = None) -> None:
    """Append a record to results.jsonl in one durable write, with `secrets` (default: the current
    backbone's API key) redacted from it; raises RunWriteError."""
    append_record(path, record_row(record, secrets))


def record_row(record: Record, secrets: Sequence[str] | None = None) -> dict[str, Any]:
    """The results.jsonl line of `record`, `secrets` (default: the current backbone's API key) redacted."""
    return redact(record.to_dict(), list(secrets) if secrets is not None else _secrets())


async def judge_items(
    items: Sequence[Item],
    program: dspy.Module,
    results_path: Path,
    *,
    task: str,
    method: str,
    concurrency: int = 1,
    progress: RunProgress | None = None,
    on_record: Callable[[Record], None] | None = None,
) -> list[Record]:
    """Judge `items` with at most `concurrency` in flight, appending each record as it finishes.

    A backbone that cannot be reached stops the run (every item would fail) after the items in
    flight finish; what was written stays and a rerun resumes. Other exceptions are recorded per item.
    """
    if concurrency < 1:
        raise InputError(f"must be at least 1, got {concurrency}", field="concurrency")
    gate = asyncio.Semaphore(concurrency)
    writer, secrets = RecordWriter(results_path), _secrets()  # writes off the loop (writer.py)
    fatal: list[BaseException] = []
    records: list[Record] = []

    async def one(item: Item) -> None:
        async with gate:
            if fatal:
                return
            try:
                record = await judge_one(item, program, task=task, method=method)
                await writer.write(record_row(record, secrets))
            except (BackboneError, RunWriteError) as exc:
                fatal.append(exc)
                return
            records.append(record)
            if progress is not None:
                _count(progress, record)
            if on_record is not None:
                on_record(record)

    with judging_run():  # issue 14: a run's calls cost the same at item 5,000 as at item 1
        await asyncio.gather(*(one(item) for item in items))
    if fatal:
        raise fatal[0]
    return records


def _explain(exc: Exception) -> Exception:
    """Turn an unreachable-backbone exception into a BackboneError where it can be recognised."""
    try:
        from cejudge_dspy.backbones.errors import explain_backbone_error
    except ImportError:  # pragma: no cover - backbones is part of the package
        return exc
    lm = dspy.settings.lm
    return explain_backbone_error(exc, getattr(lm, "model", "?")) or exc


def _secrets() -> list[str]:
    """The current backbone's API key: never stored in a record, whatever a server echoes back."""
    lm = dspy.settings.lm
    key = (getattr(lm, "kwargs", None) or {}).get("api_key")
    return [key] if isinstance(key, str) else []


def _count(progress: RunProgress, record: Record) -> None:
    progress.done += 1
    progress.unparsed += record.status == "unparsed"
    progress.errors += record.status == "error"
    if record.result is not None:
        progress.calls += record.result.usage.calls
