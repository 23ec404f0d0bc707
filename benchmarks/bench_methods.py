"""Judge the same pairs with the likelihood judge, CE-Judge and the direct judge, and print one table.

    python -m benchmarks.bench_methods                       # all three methods, both sets, embedded
    python -m benchmarks.bench_methods --methods likelihood,direct --max-seconds 1800
    python -m benchmarks.bench_methods --no-run              # the table of what OUT already holds
    python -m benchmarks.bench_methods --no-run --record     # ... appended to docs/measurements/data/

The sets: the 60 obvious pairs (`benchmarks/obvious/pairwise.jsonl`) and the real English pairs of
`../shared/data/pairwise_en_dev.jsonl` (LLMBar, MT-Bench human, Auto-J; gold ties are not scored), both as
task `chat`. Each (set, method) is one `cejudge evaluate` run directory, OUT/SET/METHOD, judged in file
order (`--first N`: only its first N items): a rerun resumes it and judges only what is missing, so a
long run stopped by `--max-seconds` (or Ctrl-C) loses at most the item in flight. Runs go one after the
other, never two models at once, with `--no-cache` unless `--cache`, so each item's seconds are its own
work (at `--concurrency` 1).

The table, per set and method: items judged, accuracy with its 95% bootstrap CI (`metrics.bootstrap_ci`
of `metrics.accuracy`: unparsed items and gold ties excluded and counted, a predicted tie is wrong),
unparsed items, LM calls and seconds per item (mean of the records' own seconds; the first item of a
session includes loading the model). Then, per set and pair of methods, on the items both judged and
scored: the exact McNemar test (`metrics.mcnemar`: b = only the first right, c = only the second right,
the difference in accuracy and its p-value). `--record` appends both tables, dated, with the host and
versions, to docs/measurements/data/bench_methods.json, which docs/measurements/likelihood-judge.md
shows (record.py).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.record import Table, add_record_argument, record
from cejudge_dspy.metrics import accuracy, bootstrap_ci, mcnemar
from cejudge_dspy.runs import Record, read_run, read_timing

HERE = Path(__file__).resolve().parent
SETS = {
    "obvious": HERE / "obvious" / "pairwise.jsonl",
    "en_dev": HERE.parent.parent / "shared" / "data" / "pairwise_en_dev.jsonl",
}
METHODS = ("likelihood", "cejudge", "direct")


def evaluate_command(path: Path, method: str, out: Path, args: argparse.Namespace) -> list[str]:
    """The `cejudge evaluate` command of one run; the same flags every time, so a rerun resumes it."""
    cmd = [sys.executable, "-m", "cejudge_dspy.cli", "evaluate", "--task", "chat", "--data", str(path)]
    cmd += ["--field", "id=id", "--lm", args.lm, "--method", method, "--out", str(out), "--bootstrap", "0"]
    if args.first is not None:
        cmd += ["--first", str(args.first)]
    if args.concurrency > 1:
        cmd += ["--concurrency", str(args.concurrency)]
    return cmd + ([] if args.cache else ["--no-cache"])


def run_one(cmd: list[str], max_seconds: float | None) -> int:
    """Run `cmd`; past `max_seconds`, stop it (SIGTERM: whole records are kept, the item in flight is
    judged again on the next run). Returns its exit code, or 0 when it was stopped on time."""
    print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    proc = subprocess.Popen(cmd)
    try:
        return proc.wait(timeout=max_seconds)
    except subprocess.TimeoutExpired:
        print(f"bench_methods: stopping after {max_seconds:g} s (rerun to go on)", file=sys.stderr)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        return 0


# --- figures ---------------------------------------------------------------------------------------------


def correct(record: Record) -> bool | None:
    """Whether the verdict is the gold label; None when it is not scored (unparsed, error, gold tie)."""
    label = str(record.item.label or "").strip().upper()
    if record.status != "ok" or record.result is None or label not in ("A", "B"):
        return None
    return record.result.verdict == label


def method_row(records: Sequence[Record], n_resamples: int, wall: float | None = None) -> dict[str, Any]:
    """One method's row; `wall` is its run's wall seconds (summary.json's timing, over its sessions)."""
    preds = [r.result.verdict if r.status == "ok" and r.result else None for r in records]
    golds = [r.item.label for r in records]
    acc = bootstrap_ci(accuracy, preds, golds, n_resamples=n_resamples) if records else None
    seconds = [r.seconds for r in records if r.status != "error"]
    calls = [r.result.usage.calls for r in records if r.result is not None]
    return {
        "items": len(records),
        "scored": acc.n if acc else 0,
        "accuracy": acc.value if acc and acc.defined else None,
        "ci": (acc.ci_low, acc.ci_high) if acc and acc.ci_low is not None else None,
        "unparsed": sum(r.status == "unparsed" for r in records),
        "errors": sum(r.status == "error" for r in records),
        "calls_per_item": statistics.mean(calls) if calls else None,
        "seconds_mean": statistics.mean(seconds) if seconds else None,
        "seconds_median": statistics.median(seconds) if seconds else None,
        # With items in flight together (--concurrency) a record's seconds overlap others'; the wall clock
        # over the items is what a user waits.
        "wall_per_item": wall / len(records) if wall and records else None,
    }


def paired_row(first: Sequence[Record], second: Sequence[Record]) -> dict[str, Any]:
    """McNemar on the items both runs hold, aligned by id."""
    by_id = {r.id: r for r in second}
    common = [(r, by_id[r.id]) for r in first if r.id in by_id]
    test = mcnemar([correct(a) for a, _ in common], [correct(b) for _, b in common])
    return {
        "common": len(common),
        "n": test.n,
        "b": test.extra["b"],
        "c": test.extra["c"],
        "diff": test.value if test.defined else None,
        "p": test.p_value,
    }


def figures(root: Path, sets: Sequence[str], methods: Sequence[str], n_resamples: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in sets:
        runs: dict[str, list[Record]] = {}
        walls: dict[str, float | None] = {}
        for method in methods:
            path = root / name / method
            runs[method] = read_run(path).records if (path / "results.jsonl").exists() else []
            walls[method] = (read_timing(path / "summary.json") or {}).get("wall_seconds")
        out[name] = {
            "methods": {m: method_row(rs, n_resamples, walls[m]) for m, rs in runs.items()},
            "paired": {
                f"{a} vs {b}": paired_row(runs[a], runs[b]) for a, b in itertools.combinations(methods, 2)
            },
        }
    return out


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def print_table(figs: dict[str, Any], lm: str) -> None:
    print(f"backbone {lm}; accuracy with 95% bootstrap CI; McNemar exact on the items both methods scored\n")
    print(
        "| set | method | items | scored | accuracy | 95% CI | unparsed | calls/item | s/item (median) "
        "| wall s/item |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, fig in figs.items():
        for method, row in fig["methods"].items():
            ci = f"[{_num(row['ci'][0])}, {_num(row['ci'][1])}]" if row["ci"] else "-"
            print(
                f"| {name} | {method} | {row['items']} | {row['scored']} | {_num(row['accuracy'])} | {ci} | "
                f"{row['unparsed']} | {_num(row['calls_per_item'], 1)} | "
                f"{_num(row['seconds_mean'], 1)} ({_num(row['seconds_median'], 1)}) | "
                f"{_num(row['wall_per_item'], 1)} |"
            )
    print(
        "\n| set | pair (first vs second) | common items | n scored | b: first only | c: second only "
        "| accuracy diff | McNemar p |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, fig in figs.items():
        for pair, row in fig["paired"].items():
            print(
                f"| {name} | {pair} | {row['common']} | {row['n']} | {row['b']} | {row['c']} | "
                f"{_num(row['diff'])} | {_num(row['p'])} |"
            )


def tables(figs: dict[str, Any], lm: str) -> list[Table]:
    """The two tables `print_table` prints, as data: per set and method, then per pair of methods."""
    methods = Table(
        [
            "set",
            "method",
            "items",
            "scored",
            "accuracy",
            "95% CI",
            "unparsed",
            "calls/item",
            "s/item (median)",
            "wall s/item",
        ],
        [
            [
                name,
                method,
                row["items"],
                row["scored"],
                row["accuracy"],
                list(row["ci"]) if row["ci"] else None,
                row["unparsed"],
                row["calls_per_item"],
                [row["seconds_mean"], row["seconds_median"]],
                row["wall_per_item"],
            ]  # fmt: skip
            for name, fig in figs.items()
            for method, row in fig["methods"].items()
        ],
        ["", "", "", "", "{:.3f}", "[{:.3f}, {:.3f}]", "", "{:.1f}", "{:.1f} ({:.1f})", "{:.1f}"],
        f"backbone {lm}; accuracy with 95% bootstrap CI; s/item is the mean of the records' seconds (they "
        "overlap when items are judged together); wall s/item is the run's wall clock over its items",
    )
    paired = Table(
        [
            "set",
            "pair (first vs second)",
            "common items",
            "n scored",
            "b: first only right",
            "c: second only right",
            "accuracy diff",
            "McNemar p",
        ],  # fmt: skip
        [
            [name, pair, row["common"], row["n"], row["b"], row["c"], row["diff"], row["p"]]
            for name, fig in figs.items()
            for pair, row in fig["paired"].items()
        ],
        ["", "", "", "", "", "", "{:+.3f}", "{:.3f}"],
        "McNemar exact on the items both methods scored",
    )
    return [methods, paired]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lm", default="embedded", help="backbone, as for cejudge (default: embedded)")
    p.add_argument("--methods", default=",".join(METHODS), help="comma-separated, run in this order")
    p.add_argument("--sets", default=",".join(SETS), help="comma-separated: obvious, en_dev")
    p.add_argument("--out", default="runs/bench_methods", help="run directories go to OUT/SET/METHOD")
    p.add_argument("--max-seconds", type=float, help="stop each run after this long (resume later)")
    p.add_argument("--first", type=int, help="judge only the first N items of each set (cejudge --first)")
    p.add_argument(
        "--concurrency",
        type=int,
        default=1,
        help="items in flight per run (cejudge --concurrency; an item's seconds then overlap others')",
    )
    p.add_argument("--no-run", action="store_true", help="judge nothing; print the table of what OUT holds")
    p.add_argument("--cache", action="store_true", help="let DSPy's response cache answer (default: off)")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the CIs")
    p.add_argument("--json", help="also write the figures to this JSON file")
    add_record_argument(p, "bench_methods")
    args = p.parse_args(argv)
    args.method_list = [m.strip() for m in args.methods.split(",") if m.strip()]
    args.set_list = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in args.set_list if s not in SETS]
    if unknown:
        p.error(f"--sets: unknown {', '.join(unknown)}; available: {', '.join(SETS)}")
    if args.bootstrap < 1:
        p.error("--bootstrap: must be at least 1")
    if args.first is not None and args.first < 1:
        p.error("--first: must be at least 1")
    if args.concurrency < 1:
        p.error("--concurrency: must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = Path(args.out)
    for name in args.set_list:
        if not SETS[name].exists():
            print(f"bench_methods: {SETS[name]} is missing; skipping the {name} set", file=sys.stderr)
    sets = [s for s in args.set_list if SETS[s].exists()]
    started = time.monotonic()
    if not args.no_run:
        for name, method in itertools.product(sets, args.method_list):
            rc = run_one(evaluate_command(SETS[name], method, root / name / method, args), args.max_seconds)
            if rc != 0:
                print(
                    f"bench_methods: cejudge evaluate failed (exit {rc}) on {name}/{method}", file=sys.stderr
                )
                return rc
    figs = figures(root, sets, args.method_list, args.bootstrap)
    print_table(figs, args.lm)
    record(args, "bench_methods", tables(figs, args.lm), argv)
    if args.json:
        meta = {"lm": args.lm, "out": str(root), "wall_seconds": round(time.monotonic() - started, 1)}
        Path(args.json).write_text(json.dumps(meta | {"sets": figs}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
