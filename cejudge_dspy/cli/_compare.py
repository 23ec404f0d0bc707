"""CLI commands over runs already written: score-predictions, compare, merge.

They read results and print tables; nothing here judges. Registered by evaluate.py's `add_parsers`,
beside `evaluate`, in the order `cejudge --help` has always listed them.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("score-predictions", help="per-language accuracy / Kendall tau of `pred, gold` files")
    p.add_argument("files", nargs="+")
    p.set_defaults(handler=run_score_predictions)

    p = sub.add_parser("compare", help="compare two runs on the same items")
    p.add_argument("runs", nargs=2)
    for which in ("a", "b"):
        p.add_argument(
            f"--rule-{which}",
            choices=("argmax", "probability"),
            default=None,
            help=f"read run {which.upper()}'s records under this decision rule (default: as recorded); "
            "the same run twice with --rule-a argmax --rule-b probability compares the rules",
        )
    p.set_defaults(handler=run_compare)

    p = sub.add_parser("merge", help="merge the results of sharded runs into one run directory")
    p.add_argument("runs", nargs="+")
    p.add_argument("--out", required=True)
    p.add_argument("--partial", action="store_true", help="merge even if some of the N shards are missing")
    p.set_defaults(handler=run_merge)


def run_score_predictions(args: argparse.Namespace) -> int:
    from rich.table import Table

    from cejudge_dspy.cli.display import console
    from cejudge_dspy.metrics import average, score_prediction_files, strict_average

    scores = score_prediction_files(args.files)
    table = Table(title="Scores of prediction files")
    for col in ("file", "language", "metric", "value", "strict", "n", "unparsed"):
        table.add_column(col)
    for s in scores:
        strict = s.strict_value
        table.add_row(
            Path(s.path).name,
            s.language,
            s.result.name,
            f"{s.value:.3f}",
            "" if strict is None else f"{strict:.3f}",
            str(s.result.n),
            str(s.n_unparsed),
        )
    for kind in sorted({s.kind for s in scores}):
        avg = average(scores, kind)
        strict = strict_average(scores) if kind == "pairwise" else None
        table.add_row(
            f"[bold]average ({kind})[/]",
            "",
            avg.name,
            f"{avg.value:.3f}",
            "" if strict is None else f"{strict:.3f}",
            str(avg.n),
            str(avg.extra["n_unparsed"]),
        )
    table.caption = "strict: accuracy with unparsed predictions counted wrong (the paper's definition)"
    console().print(table)
    return 0


def run_compare(args: argparse.Namespace) -> int:
    from cejudge_dspy.cli.display import compare_table, console
    from cejudge_dspy.metrics import compare_runs

    console().print(
        compare_table(
            compare_runs(Path(args.runs[0]), Path(args.runs[1]), rule_a=args.rule_a, rule_b=args.rule_b)
        )
    )
    return 0


def run_merge(args: argparse.Namespace) -> int:
    from cejudge_dspy.cli.display import console, summary_table
    from cejudge_dspy.evaluate import merge_runs

    summary = merge_runs([Path(r) for r in args.runs], Path(args.out), partial=args.partial)
    console().print(summary_table(summary))
    if part := summary.get("partial"):
        missing = ", ".join(f"{k}/{part['of']}" for k in part["missing"])
        console(stderr=True).print(f"partial merge: shards {missing} are missing from {args.out}")
    return 0
