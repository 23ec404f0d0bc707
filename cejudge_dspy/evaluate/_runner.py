"""`cejudge evaluate`: judge items concurrently, write each record as it finishes, resume on rerun.

A run directory holds `run.json` (what was run), `results.jsonl` (one record per finished item,
each written in one append so an interrupted run leaves only whole lines) and `summary.json`.
A rerun with the same configuration skips the items already recorded; records with status "error"
(an exception, not a parse failure) are retried. Unparsed outcomes are final: they are results.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dspy

from cejudge_dspy.backbones import error_line
from cejudge_dspy.data import Item
from cejudge_dspy.errors import BackboneError, InputError
from cejudge_dspy.judges import backbone_features, judging_run  # judging_run: issue 14
from cejudge_dspy.judges.verdicts import JudgeResult
from cejudge_dspy.runs import Record, RecordWriter, RunWriteError, append_record, redact, secrets_of


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


async def judge_one(item: Item, program: Any, *, task: str, method: str) -> Record:
    """Judge one item into its record, timed. A parse failure is an "unparsed" record and any other
    exception an "error" record; a backbone that cannot be reached raises BackboneError (every item would
    fail, so the run stops). The local runner and each Ray worker (_worker.py) call this per item."""
    start = time.monotonic()
    try:
        pred = await program.acall(**item.inputs())
        result: JudgeResult = pred.result
        record = Record(item.id, task, method, result.status, item, result)
        # A panel's prediction carries its members' outcomes beside the panel's result (judges.panel).
        members = pred.get("members") if hasattr(pred, "get") else None
        if members is not None:
            record.members = list(members)
    except BackboneError:
        raise
    except Exception as exc:  # recorded per item; the run goes on
        explained = _explain(exc)
        if isinstance(explained, BackboneError):
            raise explained from exc
        record = Record(item.id, task, method, "error", item, None, error=error_line(explained))
    record.seconds = round(time.monotonic() - start, 3)
    # What this item's calls could use, and the adapter they were asked through.
    record.features = backbone_features(dspy.settings.lm, dspy.settings.adapter)
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
    writer, secrets = RecordWriter(results_path), _secrets()  # writes off the loop (`runs.RecordWriter`)
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
        from cejudge_dspy.backbones import explain_backbone_error
    except ImportError:  # pragma: no cover - backbones is part of the package
        return exc
    lm = dspy.settings.lm
    return explain_backbone_error(exc, getattr(lm, "model", "?")) or exc


def _secrets() -> list[str]:
    """The current backbone's API key and the credentials in its server's URL, and a panel's members'
    (judges.panel.panel_lms): never stored in a record, whatever a server echoes back."""
    from cejudge_dspy.judges.panel import panel_lms

    kwargs = [getattr(lm, "kwargs", None) or {} for lm in [dspy.settings.lm, *panel_lms()]]
    return secrets_of([k.get("api_key") for k in kwargs], [k.get("api_base") for k in kwargs])


def _count(progress: RunProgress, record: Record) -> None:
    progress.done += 1
    progress.unparsed += record.status == "unparsed"
    progress.errors += record.status == "error"
    if record.result is not None:
        progress.calls += record.result.usage.calls
