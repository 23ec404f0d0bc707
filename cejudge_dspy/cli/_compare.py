"""CLI commands over runs already written: score-predictions, compare (two runs, or the markdown tables
of `--ablations` and `--rules`), merge.

They read results and print tables; nothing here judges. Registered by _evaluate.py's `add_parsers`,
beside `evaluate`, in the order `cejudge --help` has always listed them.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from cejudge_dspy.cli._common import check_bounds
from cejudge_dspy.cli._run_args import BOOTSTRAP
from cejudge_dspy.errors import InputError


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("score-predictions", help="per-language accuracy / Kendall tau of `pred, gold` files")
    p.add_argument("files", nargs="+")
    p.set_defaults(handler=run_score_predictions)

    p = sub.add_parser(
        "compare",
        help="compare two runs on the same items, or print markdown tables of finished runs",
        description="Without a mode flag: two runs on the same items (RUN_A RUN_B). "
        "--ablations BASE RUN...: a markdown table of each run against the base. "
        "--rules RUN...: a markdown table per run, argmax against probability. "
        "The markdown goes to stdout, to paste into papers and docs.",
    )
    p.add_argument(
        "runs", nargs="+", metavar="RUN", help="run directories written by `cejudge evaluate --out`"
    )
    # One mode at a time: the positional runs mean something different in each (two runs, a base and its
    # ablations, or runs each read alone), so argparse refuses two modes before anything is read.
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--ablations",
        action="store_true",
        help="markdown table: every later RUN against the first (the method as designed), paired",
    )
    mode.add_argument(
        "--rules",
        action="store_true",
        help="markdown table per RUN: argmax against probability, from its summary.json",
    )
    for which in ("a", "b"):
        p.add_argument(
            f"--rule-{which}",
            choices=("argmax", "probability"),
            default=None,
            help=f"read run {which.upper()}'s records under this decision rule (default: as recorded); "
            "the same run twice with --rule-a argmax --rule-b probability compares the rules",
        )
    p.add_argument(
        "--bootstrap",
        type=int,
        metavar="N",
        default=1000,
        help="resamples for the paired bootstrap of pointwise runs (two runs, --ablations; default 1000)",
    )
    p.set_defaults(handler=run_compare)

    p = sub.add_parser(
        "merge",
        help="merge the results of sharded runs into one run directory, or (--members) the runs of several "
        "judges on the same items into one panel run",
    )
    p.add_argument("runs", nargs="+")
    p.add_argument("--out", required=True)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--partial",
        action="store_true",
        help="merge even if some of the N shards are missing, or a shard lacks records of its items "
        "(interrupted, or a torn last line); the summary says what is missing",
    )
    mode.add_argument(
        "--members",
        action="store_true",
        help="the runs are single judges of the same items: join them as a panel's members (majority, "
        "mean and stacked verdicts, agreement, paired tests) without judging again; the panel holds the "
        "items every run judged",
    )
    p.add_argument(
        "--tie-band",
        type=float,
        help="with --members: the band of the panel's mean rule (default: the first run's --tie-band)",
    )
    p.add_argument("--bootstrap", type=int, default=1000, help="with --members: bootstrap resamples for CIs")
    p.set_defaults(handler=run_merge)


def run_score_predictions(args: argparse.Namespace) -> int:
    from rich.table import Table
    from rich.text import Text

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
            Text(f"average ({kind})", style="bold"),
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
    from cejudge_dspy.metrics import ablation_table, compare_runs, rules_table

    check_bounds(args, (BOOTSTRAP,))
    runs = [Path(r) for r in args.runs]
    if (args.ablations or args.rules) and (args.rule_a or args.rule_b):
        raise InputError(
            "--rule-a/--rule-b read two runs under a decision rule; --ablations reads each run as recorded "
            "and --rules shows both rules already"
        )
    if args.ablations:
        # Plain print, not rich: markdown must reach the file or terminal unwrapped and unstyled.
        print(ablation_table(runs[0], runs[1:], n_resamples=args.bootstrap))
        return 0
    if args.rules:
        tables = [rules_table(run) for run in runs]  # all read before any is printed: no half output
        for table in tables:
            print(table + "\n")
        return 0
    if len(runs) != 2:
        raise InputError(
            f"compare takes two runs (got {len(runs)}); `--ablations BASE RUN...` sets several against a "
            "base, `--rules RUN...` tabulates each alone"
        )
    if runs[0].resolve() == runs[1].resolve() and args.rule_a == args.rule_b:
        raise InputError(
            f"{runs[0]} and {runs[1]} are the same run: a run compared with itself differs in nothing; "
            "pass two runs (or --rule-a/--rule-b to compare two decision rules on one run)",
            field="runs",
        )
    console().print(
        compare_table(
            compare_runs(runs[0], runs[1], n_resamples=args.bootstrap, rule_a=args.rule_a, rule_b=args.rule_b)
        )
    )
    return 0


def run_merge(args: argparse.Namespace) -> int:
    from cejudge_dspy.cli.display import console, summary_table
    from cejudge_dspy.evaluate import merge_runs

    check_bounds(args, (BOOTSTRAP,))
    if args.members:
        return _merge_members(args)
    if args.tie_band is not None:
        raise InputError("applies to a panel of members only; add --members", field="--tie-band")

    summary = merge_runs([Path(r) for r in args.runs], Path(args.out), partial=args.partial)
    console().print(summary_table(summary))
    if part := summary.get("partial"):
        said = []
        if part["missing"]:
            shards = ", ".join(f"{k}/{part['of']}" for k in part["missing"])
            said.append(f"shards {shards} are missing")
        if part.get("incomplete"):
            lacks = ", ".join(f"{k} lacks {m}" for k, m in part["incomplete"].items())
            said.append(f"{part['missing_items']} items of the shards merged have no record ({lacks})")
        console(stderr=True).print(f"partial merge into {args.out}: {'; '.join(said)}", soft_wrap=True)
    return 0


def _merge_members(args: argparse.Namespace) -> int:
    from cejudge_dspy.cli._evaluate_run import print_run_tables
    from cejudge_dspy.cli.display import console
    from cejudge_dspy.evaluate import merge_members
    from cejudge_dspy.judges import JudgeOptions
    from cejudge_dspy.tasks import load_task

    band = dict(JudgeOptions.options())["tie_band"]  # the one bound --tie-band has everywhere
    if args.tie_band is not None and (problem := band.problem(args.tie_band)):
        raise InputError(problem, field="--tie-band")
    summary = merge_members(
        [Path(r) for r in args.runs], Path(args.out), tie_band=args.tie_band, n_resamples=args.bootstrap
    )
    print_run_tables(summary, load_task(summary["task"]).mode)
    beyond = {k: n for k, n in summary["run"]["members_beyond_panel"].items() if n}
    if beyond:
        said = ", ".join(f"{k} {n}" for k, n in beyond.items())
        console(stderr=True).print(
            f"items judged by some members only, left out of the panel: {said}", soft_wrap=True
        )
    return 0
