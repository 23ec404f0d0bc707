"""`cejudge calibrate RUN`: how well a pairwise run's p(A) is calibrated, and the tie band that fits its
items best (run it on a dev split; `--tie-band` then applies the band to new runs)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import InputError

# Confidence bins over [0.5, 1]: beyond 100 a bin is narrower than 0.005 and holds next to no item.
MAX_BINS = 100


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "calibrate",
        help="pairwise run: calibration of p(A) (ECE, reliability bins) and the tie band that fits it best",
    )
    p.add_argument("run", help="a pairwise run directory written by `cejudge evaluate --out` (a dev split)")
    p.add_argument(
        "--bins", type=int, default=5, help=f"confidence bins over [0.5, 1], 1 to {MAX_BINS} (default 5)"
    )
    p.add_argument("--json", action="store_true", help="print JSON (every candidate band) instead of tables")
    p.set_defaults(handler=run_calibrate)


def run_calibrate(args: argparse.Namespace) -> int:
    from cejudge_dspy.cli.display import console, reliability_table, tie_band_table
    from cejudge_dspy.metrics import calibrate_run, load_run
    from cejudge_dspy.tasks import load_task

    path = Path(args.run)
    if not path.is_dir():
        raise InputError(f"{path} is not a run directory", field="run")
    if not 1 <= args.bins <= MAX_BINS:
        raise InputError(f"must be from 1 to {MAX_BINS} (confidence bins), got {args.bins}", field="--bins")
    config, records = load_run(path)
    task = config.get("task") or (records[0].task if records else None)
    if not task:
        raise InputError(f"{path}: neither run.json nor a record names the task", field="run")
    spec = load_task(task)
    if spec.mode != "pairwise":
        raise InputError(f"{path} judges the pointwise task '{spec.name}'; calibrate reads pairwise p(A)")
    report = calibrate_run(records, n_bins=args.bins)
    choice = report["tie_band_on_these_items"]
    if not choice["n"]:
        statuses = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report["probabilities"].items())
        raise InputError(
            f"{path}: no record has p(A) and a gold A, B or tie label (probabilities: {statuses or 'none'}); "
            "rerun on a backbone that returns token probabilities"
        )
    out = console()
    if args.json:
        out.print_json(json.dumps({"run": str(path), "task": spec.name, **report}))
        return 0
    out.print(tie_band_table(choice))
    out.print(reliability_table(report))
    return 0
