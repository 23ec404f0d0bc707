"""`cejudge calibrate RUN`: how well a pairwise run's p(A) is calibrated, and the tie band that fits its
items best (run it on a dev split; `--tie-band` then applies the band to new runs); and for any run with
a confidence (pairwise or pointwise), the selective-judging table: its metric on the most confident items
at each coverage, AURC, and with `--abstain-below` the items a threshold leaves to a person. The report is
the library's (`metrics.calibrate`); this prints it."""

from __future__ import annotations

import argparse
import json
from typing import Any

from cejudge_dspy.cli._selective import add_selective_args

MAX_BINS = 100  # metrics.MAX_BINS, spelt here: the parser is built without the metrics' numpy


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
    from cejudge_dspy.cli.display import console, reliability_table, selective_table, tie_band_table
    from cejudge_dspy.metrics import calibrate
    from cejudge_dspy.tasks import load_task

    report = calibrate(args.run, bins=args.bins, confidence=args.confidence, abstain_below=args.abstain_below)
    out = console()
    if args.json:
        out.print_json(json.dumps(report))
        return 0
    if "tie_band_on_these_items" in report:
        out.print(tie_band_table(report["tie_band_on_these_items"]))
        out.print(reliability_table(report))
    if (selective := report["selective"]) is not None and selective["n"] > selective["n_without_confidence"]:
        out.print(selective_table(selective, load_task(report["task"]).mode))
    return 0
