"""Dated measurements as data: a benchmark's tables, appended to docs/measurements/data/BENCH.json.

A user-facing benchmark takes `--record` (`add_record_argument`): after printing its tables, it appends
one entry to its data file (`record`), and the measurement page that shows the benchmark includes the
file through `docs/hooks/measurement_tables.py`, newest entry first, so the page's tables are generated
from the data and cannot drift from what was measured.

    python -m benchmarks.bench_cli_start --record    # to docs/measurements/data/bench_cli_start.json
    python -m benchmarks.bench_cli_start --record /tmp/try.json --note "after the lazy parser"

Why a flag on each benchmark rather than a wrapper that parses their printed output: the benchmark holds
its rows as numbers before it formats them, so the entry keeps data (a median as 0.838, not "0.838 s"),
and printing may change without breaking the record. `--record` is opt-in, so a trial run never touches
the docs; `--record FILE` writes elsewhere.

An entry: `date` (UTC, ISO 8601), `host` (CPU model, cores, load average at the end of the run, platform),
`versions` (Python, DSPy, xllamacpp; entries before issue 46: llama-cpp-python), `commit` (short hash,
`dirty` when the tree had changes), `command` (exactly as run), `note` (optional markdown) and `tables`:
each a `title`, `columns`,
`formats` (one per column: a `str.format` template for numbers, "" as is; a list of numbers, such as a
CI's two ends, is one cell its template formats together), `align` (optional: "l" or "r" per column) and
`rows` (lists of numbers, strings or null). An entry may also carry a `title` (after the date in its
heading). Entries copied from pages written by hand carry what those pages said: the host as
`description`, and a `source` sentence saying so.

Only the standard library here: `bench_cli_start` must not import DSPy to record.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "docs" / "measurements" / "data"
SCHEMA = 1
# A list is one cell of several numbers (a CI's two ends) that its column's template formats together.
Cell = int | float | str | None | list[float | None]


@dataclass
class Table:
    """One table of a measurement: rows as data; `formats` say how the page prints each column's numbers."""

    columns: list[str]
    rows: list[list[Cell]]
    formats: list[str] = field(default_factory=list)
    title: str = ""
    align: str = ""  # "l"/"r" per column; "" lets the page right-align the columns that hold numbers

    def __post_init__(self) -> None:
        self.formats = self.formats or [""] * len(self.columns)
        if len(self.formats) != len(self.columns):
            raise ValueError(f"{len(self.formats)} formats for {len(self.columns)} columns")
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"row {row!r} has {len(row)} cells for {len(self.columns)} columns")


def add_record_argument(parser: argparse.ArgumentParser, bench: str) -> None:
    """`--record [FILE]` (default: this benchmark's data file) and `--note TEXT` on `parser`."""
    default = DATA / f"{bench}.json"
    parser.add_argument(
        "--record",
        nargs="?",
        const=str(default),
        metavar="FILE",
        help=f"append this run's tables, dated, with the host and versions, to FILE "
        f"(default: {default.relative_to(REPO)}, which the measurement page includes)",
    )
    parser.add_argument("--note", default="", help="with --record: a sentence on what this run measured")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def host() -> dict[str, Any]:
    """The machine: CPU model, cores, load average (1, 5, 15 min), OS and architecture."""
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "platform": f"{platform.system()} {platform.release()} {platform.machine()}",
    }


def versions() -> dict[str, str | None]:
    return {
        "python": platform.python_version(),
        "dspy": _version("dspy"),
        "xllamacpp": _version("xllamacpp"),  # the embedded road (older entries: llama_cpp)
    }


def command(module: str, argv: Sequence[str] | None) -> str:
    """The command as run: this process's own command line (`python -m MODULE ...` or
    `python PATH ...`, the interpreter's path shortened to `python`) when `argv` is None (a benchmark's
    `main()` run as a script); else, for a call from Python, `python -m MODULE ARGV`. Given arguments are
    never compared with this process's: under a bare `python -m pytest` both are empty."""
    if argv is None:
        return shlex.join(["python", *sys.orig_argv[1:]])
    return shlex.join(["python", "-m", module, *argv])


def entry(module: str, argv: Sequence[str] | None, tables: Sequence[Table], note: str = "") -> dict[str, Any]:
    """A dated entry for this run on this host."""
    commit = _git("rev-parse", "--short", "HEAD")
    dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": host(),
        "versions": versions(),
        "commit": commit + (" (dirty)" if commit and dirty else ""),
        "command": command(module, argv),
        "note": note,
        "tables": [asdict(t) for t in tables],
    }


def append(path: Path | str, bench: str, new: dict[str, Any]) -> Path:
    """Append `new` to the data file at `path` (made if missing); entries stay in the order recorded."""
    path = Path(path)
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    if data and data.get("benchmark") != bench:
        raise ValueError(f"{path} holds {data.get('benchmark')!r} measurements, not {bench!r}")
    data = {"schema": SCHEMA, "benchmark": bench, "entries": [*data.get("entries", []), new]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def record(
    args: argparse.Namespace,
    bench: str,
    tables: Sequence[Table],
    argv: Sequence[str] | None = None,
    module: str | None = None,
) -> Path | None:
    """With `--record`, append this run's entry to its file and say so on stderr; else nothing.
    `module`: what `python -m` runs (default `benchmarks.BENCH`)."""
    if not getattr(args, "record", None):
        return None
    path = append(args.record, bench, entry(module or f"benchmarks.{bench}", argv, tables, args.note))
    print(f"recorded: {path}", file=sys.stderr)
    return path
