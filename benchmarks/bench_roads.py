"""Two installs of the package judge the same pairs, cell by cell: speed ratios and agreement from one run.

    python -m benchmarks.bench_roads --road before=/old/venv/bin/python@/old/checkout \\
        --road after=.venv/bin/python --methods cejudge,likelihood,direct --concurrency 1,4 --first 20

Made to compare two commits of the embedded backbone (the in-process engine against llama.cpp's server):
each road is a Python interpreter, optionally with a checkout put first on its PYTHONPATH (`PYTHON@CHECKOUT`),
and each cell (method x concurrency) is one `cejudge evaluate` run directory per road, OUT/ROAD/METHOD-cC,
on the first N obvious pairs (`--first`), `--no-cache`. The roads alternate cell by cell, so a change in the
machine's load hits both alike; a rerun resumes what a stopped run left (its wall time then sums sessions).

Printed per cell: items per minute on each road (items over the run's wall seconds, summary.json's timing,
which includes starting the backbone: loading the model, or starting its server), the ratio of the second
road to the first, accuracy on each, and, on the items both judged, how many verdicts agree and the exact
McNemar test between the roads (b: only the first right, c: only the second). `--json` writes the cells.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cejudge_dspy.metrics import mcnemar
from cejudge_dspy.runs import read_run, read_timing

HERE = Path(__file__).resolve().parent
OBVIOUS = HERE / "obvious" / "pairwise.jsonl"


def parse_road(text: str) -> tuple[str, str, str | None]:
    name, sep, rest = text.partition("=")
    if not sep or not name or not rest:
        raise argparse.ArgumentTypeError(f"expected NAME=PYTHON[@CHECKOUT], got {text!r}")
    python, _, checkout = rest.partition("@")
    return name, python, checkout or None


def command(python: str, data: Path, method: str, concurrency: int, first: int, out: Path) -> list[str]:
    cmd = [python, "-m", "cejudge_dspy.cli", "evaluate", "--task", "chat", "--data", str(data)]
    cmd += ["--field", "id=id", "--method", method, "--first", str(first), "--no-cache", "--bootstrap", "0"]
    return cmd + ["--concurrency", str(concurrency), "--out", str(out)]


def run_cell(road: tuple[str, str, str | None], cmd: list[str]) -> int:
    env = dict(os.environ)
    if road[2]:
        env["PYTHONPATH"] = road[2] + os.pathsep + env.get("PYTHONPATH", "")
    print(f"$ [{road[0]}] " + " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, env=env, cwd=road[2] or None, check=False).returncode


def verdicts(out: Path) -> dict[str, tuple[str | None, str | None]]:
    """id -> (verdict, gold label) of a run's records (verdict None where not ok)."""
    records = read_run(out).records
    return {
        r.id: (r.result.verdict if r.status == "ok" and r.result else None, r.item.label) for r in records
    }


def cell_row(outs: Sequence[Path]) -> dict[str, Any]:
    row: dict[str, Any] = {"roads": []}
    runs = []
    for out in outs:
        got = verdicts(out) if (out / "results.jsonl").exists() else {}
        timing = read_timing(out / "summary.json") or {}
        wall = float(timing.get("wall_seconds") or 0.0)
        right = sum(v == g for v, g in got.values() if v is not None)
        row["roads"].append(
            {"items": len(got), "wall": wall, "per_minute": 60 * len(got) / wall if wall else None}
            | {"right": right}
        )
        runs.append(got)
    if len(runs) == 2:
        common = sorted(set(runs[0]) & set(runs[1]))
        row["same"] = sum(runs[0][i][0] == runs[1][i][0] for i in common)
        row["common"] = len(common)
        test = mcnemar(
            [runs[0][i][0] == runs[0][i][1] for i in common], [runs[1][i][0] == runs[1][i][1] for i in common]
        )
        if test.p_value is not None:  # undefined while no item has a verdict on both roads (a cell running)
            row["mcnemar"] = {"b": test.extra.get("b"), "c": test.extra.get("c"), "p": test.p_value}
        a, b = row["roads"][0]["per_minute"], row["roads"][1]["per_minute"]
        row["ratio"] = b / a if a and b else None
    return row


def table(names: Sequence[str], cells: dict[str, dict[str, Any]]) -> list[str]:
    head = (
        "| cell | "
        + " | ".join(f"{n} items/min (right/n)" for n in names)
        + " | ratio | same verdicts | McNemar |"
    )
    lines = [head, "|" + "---|" * (len(names) + 4)]
    for cell, row in cells.items():
        parts = []
        for road in row["roads"]:
            pm = f"{road['per_minute']:.2f}" if road["per_minute"] else "-"
            parts.append(f"{pm} ({road['right']}/{road['items']})")
        ratio = f"{row['ratio']:.2f}x" if row.get("ratio") else "-"
        same = f"{row['same']}/{row['common']}" if "same" in row else "-"
        mc = row.get("mcnemar")
        mcn = f"b={mc['b']} c={mc['c']} p={mc['p']:.3g}" if mc else "-"
        lines.append(f"| {cell} | " + " | ".join(parts) + f" | {ratio} | {same} | {mcn} |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--road", type=parse_road, action="append", required=True, help="NAME=PYTHON[@CHECKOUT]")
    p.add_argument("--methods", default="cejudge,likelihood,direct")
    p.add_argument("--concurrency", default="1,4", help="comma-separated (default 1,4)")
    p.add_argument("--first", type=int, default=20, help="the first N obvious pairs (default 20)")
    p.add_argument("--data", type=Path, default=OBVIOUS)
    p.add_argument("--out", type=Path, default=Path("runs/bench_roads"))
    p.add_argument("--no-run", action="store_true", help="only the table of what OUT holds")
    p.add_argument("--json", type=Path, help="also write the cells to this file")
    args = p.parse_args(argv)
    names = [r[0] for r in args.road]
    cells: dict[str, dict[str, Any]] = {}
    for method in args.methods.split(","):
        for concurrency in (int(c) for c in args.concurrency.split(",")):
            cell = f"{method} c{concurrency}"
            outs = [(args.out / name / f"{method}-c{concurrency}").resolve() for name in names]
            if not args.no_run:
                for road, out in zip(args.road, outs, strict=True):
                    run_cell(
                        road, command(road[1], args.data.resolve(), method, concurrency, args.first, out)
                    )
            cells[cell] = cell_row(outs)
            print("\n".join(table(names, {cell: cells[cell]})[2:]), flush=True)
    print("\n".join(table(names, cells)))
    if args.json:
        args.json.write_text(json.dumps(cells, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
