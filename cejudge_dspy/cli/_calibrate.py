"""`cejudge calibrate RUN`: how well a pairwise run's p(A) is calibrated, and the tie band that fits its
items best (run it on a dev split; `--tie-band` then applies the band to new runs); and for any run with
a confidence (pairwise or pointwise), the selective-judging table: its metric on the most confident items
at each coverage, AURC, and with `--abstain-below` the items a threshold leaves to a person. It reads
the run and writes nothing."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from cejudge_dspy.cli._common import check_bounds
from cejudge_dspy.cli._selective import ABSTAIN_BELOW, add_selective_args
from cejudge_dspy.errors import InputError

# Confidence bins over [0.5, 1]: beyond 100 a bin is narrower than 0.005 and holds next to no item.
MAX_BINS = 100


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "calibrate",
        help="calibration of p(A) (ECE, reliability bins), the tie band that fits it best, and the "
        "risk-coverage of selective judging (pointwise runs: that alone)",
    )
    p.add_argument("run", help="a pairwise run directory written by `cejudge evaluate --out` (a dev split)")
    p.add_argument(
        "--bins", type=int, default=5, help=f"confidence bins over [0.5, 1], 1 to {MAX_BINS} (default 5)"
    )
    p.add_argument("--json", action="store_true", help="print JSON (every candidate band) instead of tables")
    add_selective_args(p)
    p.set_defaults(handler=run_calibrate)


def run_calibrate(args: argparse.Namespace) -> int:
    from cejudge_dspy.metrics import calibrate_run, load_run
    from cejudge_dspy.tasks import load_task

    path = Path(args.run)
    if not path.is_dir():
        raise InputError(f"{path} is not a run directory", field="run")
    if not 1 <= args.bins <= MAX_BINS:
        raise InputError(f"must be from 1 to {MAX_BINS} (confidence bins), got {args.bins}", field="--bins")
    check_bounds(args, (ABSTAIN_BELOW,))
    config, records = load_run(path)
    task = config.get("task") or (records[0].task if records else None)
    if not task:
        raise InputError(f"{path}: neither run.json nor a record names the task", field="run")
    spec = load_task(task)
    selective = _selective(records, spec, args)
    if spec.mode != "pairwise":
        if selective is None:
            raise InputError(
                f"{path} judges the pointwise task '{spec.name}' and no record has a confidence (a score "
                "distribution); calibrate reads pairwise p(A), or a pointwise run's token probabilities"
            )
        return _print(args, {"run": str(path), "task": spec.name, "selective": selective}, spec.mode)
    report = calibrate_run(records, n_bins=args.bins)
    choice = report["tie_band_on_these_items"]
    if not choice["n"] and selective is not None and selective["n"] > selective["n_without_confidence"]:
        # No p(A), but another confidence (a panel's agreement): the selective table alone.
        return _print(args, {"run": str(path), "task": spec.name, "selective": selective}, spec.mode)
    if not choice["n"]:
        statuses = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report["probabilities"].items())
        raise InputError(
            f"{path}: no record has p(A) and a gold A, B or tie label (probabilities: {statuses or 'none'}); "
            "rerun on a backbone that returns token probabilities"
        )
    return _print(args, {"run": str(path), "task": spec.name, **report, "selective": selective}, spec.mode)


def _selective(records: list[Any], spec: Any, args: argparse.Namespace) -> dict[str, Any] | None:
    """The selective-judging section of these records (None when none has a confidence and no threshold
    was asked for)."""
    from cejudge_dspy.metrics import selective_summary

    report = selective_summary(
        records, spec.mode, confidence=args.confidence, abstain_below=args.abstain_below
    )
    if report["n"] == report["n_without_confidence"] and args.abstain_below is None:
        return None
    return report


def _print(args: argparse.Namespace, report: dict[str, Any], mode: str) -> int:
    from cejudge_dspy.cli.display import console, reliability_table, selective_table, tie_band_table

    out = console()
    if args.json:
        out.print_json(json.dumps(report))
        return 0
    if "tie_band_on_these_items" in report:
        out.print(tie_band_table(report["tie_band_on_these_items"]))
        out.print(reliability_table(report))
    if (selective := report["selective"]) is not None and selective["n"] > selective["n_without_confidence"]:
        out.print(selective_table(selective, mode))
    return 0
