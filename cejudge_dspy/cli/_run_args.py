"""The flags `cejudge evaluate` and `cejudge consistency` share, declared once with their bounds (the
library's, `cejudge_dspy.evaluate.BOUNDS`), so that the two commands spell, explain and default them alike:
the data a run reads and how many of its items (`add_data_args`), and how the run goes (`add_run_args`)."""

from __future__ import annotations

import argparse

from cejudge_dspy.evaluate import BOUNDS

CONCURRENCY, BOOTSTRAP, LIMIT, FIRST = (BOUNDS[k] for k in ("concurrency", "bootstrap", "limit", "first"))


def add_data_args(p: argparse.ArgumentParser, field: str = "") -> None:
    """`--data`, `--field` (`field`: what else it names in this command), `--const`, `--subset`, and
    `--limit` or `--first`."""
    p.add_argument("--data", help="local file or directory (default: the task's hub dataset)")
    p.add_argument(
        "--field",
        action="append",
        help=f"KEY=COLUMN mapping override{f'; {field}' if field else ''} (repeatable)",
    )
    p.add_argument("--const", action="append", help="KEY=VALUE constant field, e.g. label=A (repeatable)")
    p.add_argument("--subset", action="append", help="keep only this subset (repeatable)")
    take = p.add_mutually_exclusive_group()
    take.add_argument(
        "--limit", type=int, help=f"seeded, language-stratified sample of N items ({LIMIT.describe()})"
    )
    # The sample may pick the file's last row, so --limit reads every row; --first stops reading at N.
    take.add_argument(
        "--first", type=int, help=f"the first N items in file order, reading no further ({FIRST.describe()})"
    )


def add_run_args(p: argparse.ArgumentParser) -> None:
    """`--concurrency`, `--bootstrap` and `--force-new`."""
    p.add_argument(
        "--concurrency", type=int, default=1, help=f"items in flight at once ({CONCURRENCY.describe()})"
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        help=f"bootstrap resamples for CIs, {BOOTSTRAP.describe()} (0: none; default 1000)",
    )
    p.add_argument("--force-new", action="store_true", help="move the run in --out aside and start over")
