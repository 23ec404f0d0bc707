"""How long the CLI takes to answer when it has nothing to judge (issue #41): the wall time of
`cejudge --help`, `cejudge tasks` and `cejudge evaluate --help`, each a fresh `python -m cejudge_dspy.cli`,
beside `python -c pass` (the interpreter's own start), and each one's ratio to it.

    python -m benchmarks.bench_cli_start             # 5 runs of each, median with min and max
    python -m benchmarks.bench_cli_start --runs 11
    python -m benchmarks.bench_cli_start --record   # append the table to docs/measurements/data/

Runs are interleaved (one of each command per round), so a load that comes and goes on a shared machine
falls on all of them alike. `--record` appends the table, dated, with the host and versions, to
docs/measurements/data/bench_cli_start.json, which docs/measurements/cli-start.md shows (record.py).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timezone

from benchmarks.record import Table, add_record_argument, record

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "cejudge --help": [sys.executable, "-m", "cejudge_dspy.cli", "--help"],
    "cejudge tasks": [sys.executable, "-m", "cejudge_dspy.cli", "tasks"],
    "cejudge evaluate --help": [sys.executable, "-m", "cejudge_dspy.cli", "evaluate", "--help"],
}


def wall_time(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def table(times: dict[str, list[float]]) -> Table:
    """Median, min, max per command and the median's ratio to `python -c pass`'s."""
    base = statistics.median(times["python -c pass"])
    rows: list[list[float | str | None]] = []
    for name, values in times.items():
        median = statistics.median(values)
        rows.append([f"`{name}`", median, min(values), max(values), median / base])
    return Table(
        ["command", "median (s)", "min (s)", "max (s)", "median / python -c pass"],
        rows,
        ["", "{:.3f}", "{:.3f}", "{:.3f}", "{:.1f}x"],
        f"n = {len(times['python -c pass'])} runs of each, interleaved; wall time of a fresh process",
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each command (default 5)")
    add_record_argument(parser, "bench_cli_start")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    for command in COMMANDS.values():  # warm the file cache and the bytecode once, unmeasured
        wall_time(command)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.runs):
        for name, command in COMMANDS.items():
            times[name].append(wall_time(command))
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    host = f"{platform.node()} · {platform.machine()} · {os.cpu_count()} CPUs"
    print(f"{when} · {host} · Python {platform.python_version()}")
    result = table(times)
    print(f"{result.title}\n")
    print("| command | median (s) | min (s) | max (s) | median / python -c pass |")
    print("|---|---:|---:|---:|---:|")
    for name, median, low, high, ratio in result.rows:
        print(f"| {name} | {median:.3f} | {low:.3f} | {high:.3f} | {ratio:.1f}x |")
    record(args, "bench_cli_start", [result], argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
