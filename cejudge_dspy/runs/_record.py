"""The run record: one line of results.jsonl (`Record`), reading the lines back, and opening a run
directory with its records; with summary.json's timing, the one format every reader of a run uses.

A run directory holds `run.json` (what was run, and the ids of its items), `results.jsonl` (one record
per finished item, each written in one append so an interrupted run leaves only whole lines) and
`summary.json`. Both readers share one reading of the lines (`_read_lines`: a damaged line is one error
naming the file, line and field; a torn last line is left unread, by the rule of `_files.torn_tail`):
`read_records` is the runner's (every line, for resume), `read_run` the readers' (view, compare, merge,
calibrate, agreement: one record per item, duplicates and foreign ids refused, the torn line reported).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cejudge_dspy.data import Item
from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.files import MAX_RESULTS_BYTES, parse_json, paused_gc, read_bytes, read_json
from cejudge_dspy.judges.verdicts import JudgeResult
from cejudge_dspy.runs._dir import RESULTS, RUN, open_run, read_identity
from cejudge_dspy.runs._files import torn_tail, write_json_atomic
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
    # What the backbone gave: {"logprobs", "scoring", "schema"} -> true, false or null (not asked; see
    # judges.backbone_features), and "adapter", the prompt format asked in ("chat" or "json"; absent from
    # records written before --adapter). Absent from records written before features (read back as None).
    features: dict[str, bool | str | None] | None = None
    # A panel's run: each member's outcome for the item ({"name", "status", "result", "error", "seconds"},
    # judges.panel.MemberOutcome), `result` being the panel's. Absent from a single judge's records, and
    # ignored by readers from before panels, which read the panel's result as the record's.
    members: list[dict[str, Any]] | None = None

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
        } | (
            ({"features": dict(self.features)} if self.features is not None else {})
            | ({"members": list(self.members)} if self.members is not None else {})
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Record:
        """The record of one results.jsonl line; a missing or malformed field raises `RecordFieldError`."""
        for key in _REQUIRED:
            if key not in data:
                raise RecordFieldError(key, "is missing")
        if not isinstance(data["id"], str) or not data["id"]:
            raise RecordFieldError("id", f"is not an item id ({data['id']!r})")
        for key in ("task", "method"):
            if not isinstance(data[key], str):
                raise RecordFieldError(key, f"is not a name ({data[key]!r})")
        if data["status"] not in _STATUSES:
            raise RecordFieldError("status", f"is {data['status']!r}, not one of {', '.join(_STATUSES)}")
        if data.get("error") is not None and not isinstance(data["error"], str):
            raise RecordFieldError("error", "is not a text")
        seconds = data.get("seconds", 0.0)
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise RecordFieldError("seconds", f"is not a number ({seconds!r})")
        features = data.get("features")
        if features is not None and not (
            isinstance(features, dict)
            and all(
                isinstance(v, str) if k == "adapter" else v is None or isinstance(v, bool)
                for k, v in features.items()
            )
        ):
            raise RecordFieldError(
                "features", f"is not an object of true/false/null values with an adapter name ({features!r})"
            )
        members = data.get("members")
        if members is not None and not (
            isinstance(members, list)
            and all(
                isinstance(m, dict) and isinstance(m.get("name"), str) and m.get("status") in _STATUSES
                for m in members
            )
        ):
            raise RecordFieldError("members", "is not a list of member outcomes with a name and a status")
        known = cls.__dataclass_fields__
        fields = {k: v for k, v in data.items() if k in known}
        fields["item"] = _part("item", Item.from_dict, data["item"])
        fields["result"] = (
            _part("result", JudgeResult.from_dict, data["result"]) if data.get("result") else None
        )
        return cls(**fields)


def member_records(records: Sequence[Record]) -> dict[str, list[Record]]:
    """A panel run's records as each member's own run: member name -> one record per item, the member's
    outcome with the item (in the order of `records`). Empty for a single judge's run."""
    out: dict[str, list[Record]] = {}
    for r in records:
        for m in r.members or []:
            result = _part("members", JudgeResult.from_dict, m["result"]) if m.get("result") else None
            method = result.method if result is not None else r.method
            member = Record(r.id, r.task, method, m["status"], r.item, result, m.get("error"))
            member.seconds = float(m.get("seconds") or 0.0)
            out.setdefault(m["name"], []).append(member)
    return out


_REQUIRED = ("id", "task", "method", "status", "item")
_STATUSES = ("ok", "unparsed", "error")


class RecordFieldError(ValueError):
    """A results.jsonl line lacks a field or holds a malformed one; the reader names the file and line."""

    def __init__(self, field: str, why: str) -> None:
        super().__init__(f"field '{field}' {why}")
        self.field = field


def _part(field: str, parse: Callable[[dict[str, Any]], Any], value: Any) -> Any:
    """`parse(value)` for a nested object of a record, its failure named by `field`."""
    if not isinstance(value, dict):
        raise RecordFieldError(field, f"is not a JSON object (got {type(value).__name__})")
    try:
        return parse(value)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:  # a key missing or of another type
        raise RecordFieldError(field, f"is malformed ({' '.join(str(exc).split())[:100]})") from None


_FIX = "repair or remove the line (or start the run over with --force-new)"


def _unreadable_results(line: str) -> CEJudgeError:
    return CEJudgeError(f"{line}; pass a run directory written by `cejudge evaluate --out`")


def _corrupt_record(line: str) -> CEJudgeError:
    where, _, why = line.partition(": ")
    return CEJudgeError(f"{where}: corrupt record ({why}); {_FIX}")


def _read_lines(path: Path) -> tuple[list[tuple[int, Record]], bool]:
    """Every whole line of results.jsonl as (line number, its record), and whether a torn final
    line (`_files.torn_tail`) was left unread; a damaged earlier line is one clear error naming it."""
    data = read_bytes(path, _unreadable_results, limit=MAX_RESULTS_BYTES)  # a pipe or a device refused
    cut = torn_tail(data)
    body = data if cut is None else data[:cut]
    with paused_gc():  # millions of objects, no cycles (files._gc)
        return _records(path, body), cut is not None


def _records(path: Path, body: bytes) -> list[tuple[int, Record]]:
    rows: list[tuple[int, Record]] = []
    for n, line in enumerate(body.split(b"\n"), 1):
        if not line.strip():
            continue
        row = parse_json(line, f"{path}:{n}", _corrupt_record)  # nesting and huge numbers caught
        if not isinstance(row, dict):
            raise CEJudgeError(
                f"{path}:{n}: corrupt record (a JSON {type(row).__name__}, not an object); {_FIX}"
            )
        try:
            rows.append((n, Record.from_dict(row)))
        except RecordFieldError as exc:
            what = f"record of item {row['id']!r}" if isinstance(row.get("id"), str) else "record"
            raise CEJudgeError(f"{path}:{n}: {what}: {exc}; {_FIX}") from None
    return rows


def read_records(path: Path) -> list[Record]:
    """The runner's reader: every whole record of results.jsonl in file order (a retried item's records
    all, the last one its outcome). A torn last line (killed mid-write) is not read: the runner moves it
    aside on resume (`_files.repair_torn_tail`) and judges its item again. A damaged earlier line is one
    clear error. `read_run` is the readers' view of the same lines: one record per item, checked."""
    if not path.exists():
        return []
    return [record for _, record in _read_lines(path)[0]]


@dataclass
class RunRecords:
    """A run directory as its readers (view, compare, merge, calibrate, agreement) see it."""

    path: Path
    config: dict[str, Any]  # run.json ({} when there is none)
    records: list[Record]  # one per item: a retried item's last record, in the order first recorded
    torn: int = 0  # torn lines at the end of results.jsonl, not read: their items are missing
    expected: list[str] | None = None  # run.json's item ids; None for a run that does not list them

    @property
    def missing(self) -> list[str]:
        """The run's items without a record (run.json's ids not in results.jsonl)."""
        have = {r.id for r in self.records}
        return [i for i in self.expected or [] if i not in have]

    @property
    def n_missing(self) -> int:
        """How many items lack a record: run.json's ids without one, else at least the torn lines."""
        return len(self.missing) if self.expected is not None else self.torn


def pending_items(items: Sequence[Item], records: Sequence[Record]) -> list[Item]:
    """The items a run still lacks: those without a record, or whose record is an error (judged again)."""
    done = {r.id for r in records if r.status != "error"}
    return [item for item in items if item.id not in done]


def item_ids(ids: Sequence[str]) -> dict[str, Any]:
    """run.json's `items`: the ids of the items a run judges, so its readers can tell a missing item and
    a foreign id (a hand-edited or mixed results.jsonl) from the run's own."""
    return {"n": len(ids), "ids": list(ids)}


def _expected_ids(out: Path, config: dict[str, Any]) -> list[str] | None:
    items = config.get("items")
    if items is None:
        return None  # a run.json from before `items`: its readers cannot tell what is missing
    ids = items.get("ids") if isinstance(items, dict) else None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids) or items.get("n") != len(ids):
        raise CEJudgeError(
            f"{out / RUN}: field 'items' is not the run's list of item ids; restore the run.json that "
            "`cejudge evaluate` wrote, or rerun it with --force-new"
        )
    return ids


def read_run(out: Path) -> RunRecords:
    """Read a run directory for a reader: run.json and one record per item, or one clear error.

    A line that repeats an earlier one exactly is dropped with a warning; a second record of an item that
    did not error, a retry whose item differs, or an id that run.json's `items` does not list is refused
    with the file, line and id named (a hand-edited or mixed results.jsonl would change the metrics
    silently). A torn last line is reported on stderr and its item counts as missing (`n_missing`)."""
    path = out / RESULTS
    if not path.exists():
        raise CEJudgeError(f"{out}: no {RESULTS}; pass a directory written by `cejudge evaluate --out`")
    config = read_identity(out) or {}
    expected = _expected_ids(out, config)
    known = set(expected) if expected is not None else None
    rows, torn = _read_lines(path)
    seen: dict[str, tuple[int, Record]] = {}
    for n, record in rows:
        if known is not None and record.id not in known:
            raise CEJudgeError(
                f"{path}:{n}: item {record.id!r} is not one of the {len(known)} items of this run "
                f"(run.json); the file was edited or holds another run's records: remove the line"
            )
        if record.id in seen:
            first, first_record = seen[record.id]
            if record == first_record:
                _warn(f"{path}:{n}: item {record.id!r} repeats line {first} exactly; the copy is ignored")
                continue
            if first_record.status != "error" or record.item != first_record.item:
                raise CEJudgeError(
                    f"{path}:{n}: item {record.id!r} is recorded again, differently (line {first}); a run "
                    "records an item once, again only after an error: remove one of the two lines"
                )
        seen[record.id] = (n, record)  # a retry of an errored item: its latest record counts
    if torn:
        _warn(f"1 torn line at the end of {path}: rerun `cejudge evaluate` to resume it; its item is missing")
    return RunRecords(out, config, [record for _, record in seen.values()], int(torn), expected)


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


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
        timing = read_json(path, CEJudgeError).get("timing")
    except (CEJudgeError, AttributeError):
        return None
    return timing if isinstance(timing, dict) else None
