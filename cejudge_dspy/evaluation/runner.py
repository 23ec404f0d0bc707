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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import dspy

from cejudge_dspy.errors import BackboneError, CEJudgeError, InputError
from cejudge_dspy.items import Item
from cejudge_dspy.methods.runtime import judging_run  # issue 14: no DSPy call history, GC tuned
from cejudge_dspy.results import JudgeResult

RESULTS, RUN, SUMMARY = "results.jsonl", "run.json", "summary.json"
# What must match for a rerun to resume into the same directory.
RESUME_KEYS = ("task", "method", "lm", "orders", "translator", "program")


@dataclass
class Record:
    """One line of results.jsonl: the item, its outcome and how long it took."""

    id: str
    task: str
    method: str
    status: str  # "ok" | "unparsed" | "error"
    item: dict[str, Any]
    result: dict[str, Any] | None
    error: str | None = None
    seconds: float = 0.0

    @property
    def judge_result(self) -> JudgeResult | None:
        return JudgeResult.from_dict(self.result) if self.result else None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Record:
        return cls(**data)


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
    """Read results.jsonl; a torn last line (killed mid-write) is ignored, later ones are not."""
    if not path.exists():
        return []
    records: list[Record] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(Record.from_dict(json.loads(line)))
        except (json.JSONDecodeError, TypeError) as exc:
            if n == len(lines):
                break
            raise CEJudgeError(
                f"{path}:{n}: corrupt record ({exc}); remove the line or use another --out"
            ) from exc
    return records


def prepare_run_dir(out: Path, config: dict[str, Any]) -> list[Record]:
    """Create or reopen a run directory; refuse to mix two configurations in one file."""
    out.mkdir(parents=True, exist_ok=True)
    run_file = out / RUN
    if run_file.exists():
        old = json.loads(run_file.read_text(encoding="utf-8"))
        if old.get("method") != "cejudge" and old.get("program") == "auto":
            old["program"] = "base"  # runs recorded before programs were resolved; only CE-Judge is tuned
        diff = [k for k in RESUME_KEYS if old.get(k) != config.get(k)]
        if diff:
            shown = ", ".join(f"{k}: {old.get(k)!r} -> {config.get(k)!r}" for k in diff)
            raise CEJudgeError(
                f"{out} holds a run with other settings ({shown}); use another --out to start fresh"
            )
    run_file.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return read_records(out / RESULTS)


def pending_items(items: Sequence[Item], records: Sequence[Record]) -> list[Item]:
    done = {r.id for r in records if r.status != "error"}
    return [item for item in items if item.id not in done]


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
    fatal: list[BaseException] = []
    records: list[Record] = []

    async def one(item: Item) -> None:
        async with gate:
            if fatal:
                return
            start = time.monotonic()
            try:
                pred = await program.acall(**item.inputs())
                result: JudgeResult = pred.result
                record = Record(item.id, task, method, result.status, _item_dict(item), result.to_dict())
            except BackboneError as exc:
                fatal.append(exc)
                return
            except Exception as exc:  # recorded per item; the run goes on
                explained = _explain(exc)
                if isinstance(explained, BackboneError):
                    fatal.append(explained)
                    return
                record = Record(item.id, task, method, "error", _item_dict(item), None, error=str(explained))
            record.seconds = round(time.monotonic() - start, 3)
            _append(results_path, record)
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
        from cejudge_dspy.backbones.spec import explain_backbone_error
    except ImportError:  # pragma: no cover - backbones is part of the package
        return exc
    lm = dspy.settings.lm
    return explain_backbone_error(exc, getattr(lm, "model", "?")) or exc


def _append(path: Path, record: Record) -> None:
    # One write per line, flushed: an interrupted run leaves whole lines (plus at most one torn one).
    line = json.dumps(asdict(record), ensure_ascii=False) + "\n"
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()


def _count(progress: RunProgress, record: Record) -> None:
    progress.done += 1
    progress.unparsed += record.status == "unparsed"
    progress.errors += record.status == "error"
    if record.result:
        progress.calls += int(record.result.get("usage", {}).get("calls", 0))


def _item_dict(item: Item) -> dict[str, Any]:
    data = asdict(item)
    data.pop("meta", None)
    return data
