"""`cejudge consistency`: does the verdict survive the language? Each item is judged as given and again with
its instruction and responses rendered in each of `--languages` (by `--translator`, or from the item's own
parallel columns, `--field instruction@ko=COLUMN`), by CE-Judge and the direct judge alike.

The run is a parent directory (`cejudge_dspy.consistency`): one ordinary run per (rendering, method), the
renderings file and a summary of how often each judge changed its output, with bootstrap CIs and McNemar's
test between the judges. The flags are read once into `ConsistencyOptions` and the library's
`consistency(...)` does the run (its checks before anything is written, the renderings, the child runs, the
summary); this module shows its progress and prints the table.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cejudge_dspy.cli._common import add_backbone_args, backbone_flags, parse_fields
from cejudge_dspy.cli._run_args import add_data_args, add_run_args

TRANSLATORS = (
    "llm",
    "google",
    "none",
)  # consistency.TRANSLATORS, spelt here: the parser is built without DSPy
DEFAULT_METHODS = "cejudge,direct"


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "consistency",
        help="judge items as given and rendered in other languages: how often does each judge change its "
        "verdict (CE-Judge against the direct judge)?",
    )
    p.add_argument("--task", required=True, help="declared task (see `cejudge tasks`)")
    p.add_argument(
        "--languages",
        required=True,
        action="append",
        help="languages to render every item in, comma-separated (e.g. ko,de,ja; repeatable)",
    )
    p.add_argument(
        "--translator",
        dest="render_translator",
        default="llm",
        choices=TRANSLATORS,
        help="who renders the items: llm (the backbone itself, offline; default), google (Google Translate, "
        "needs the network) or none (only the items' own parallel versions, --field FIELD@LANG=COLUMN)",
    )
    p.add_argument(
        "--methods",
        default=DEFAULT_METHODS,
        help="judges to compare, comma-separated; the first is tested against each other "
        f"(default {DEFAULT_METHODS})",
    )
    p.add_argument(
        "--program", default="auto", help="CE-Judge's program: auto (tuned if shipped), base, or a saved path"
    )
    add_backbone_args(p)
    add_data_args(
        p,
        field="FIELD@LANG=COLUMN names an item's own version of a text in LANG (used instead of "
        "translating it)",
    )
    p.add_argument("--out", help="consistency run directory (default runs/consistency-<task>)")
    add_run_args(p)
    p.set_defaults(handler=run_consistency)


def run_consistency(args: argparse.Namespace) -> int:
    from cejudge_dspy.cli.display import console
    from cejudge_dspy.consistency import ConsistencyOptions, consistency, split_list

    options = ConsistencyOptions(
        task=args.task,
        languages=split_list(args.languages, "--languages"),
        methods=split_list([args.methods], "--methods"),
        translator=args.render_translator,
        program=args.program,
        data=args.data,
        backbone=backbone_flags(args),
        out=args.out,
        concurrency=args.concurrency,
        limit=args.limit,
        first=args.first,
        subsets=args.subset,
        fields=parse_fields(args.field),
        constants=parse_fields(args.const, "--const"),
        bootstrap=args.bootstrap,
        force_new=args.force_new,
    )
    summary = consistency(options, _Progress(console(stderr=True)))
    _print(summary, Path(args.out or f"runs/consistency-{summary['task']}"))
    return 0


class _Progress:
    """`consistency.ConsistencyProgress` on stderr (not a subclass: the parser is built without DSPy): one
    live bar for the step in progress (the renderings, then each child run), and a line on stderr
    as each step ends: `ko-direct: 60/60 items · 4:02 · ...`."""

    def __init__(self, err: Any) -> None:
        from cejudge_dspy.cli._progress import RunDisplay

        self.err = err
        self.display = RunDisplay("renderings", 0)
        self.started = False

    def note(self, line: str) -> None:
        self.err.print(line, soft_wrap=True, markup=False)

    def status(self, message: str) -> None:
        self.display.update(message)

    @contextmanager
    def judging(self) -> Iterator[None]:
        from cejudge_dspy.cli._progress import live

        with live(self.err, self.display, transient=True):
            yield

    def rendering(self, rendering: Any) -> None:
        self.display.on_record(f"{rendering.id}@{rendering.language}", rendering.status)

    def record(self, record: Any) -> None:
        self.display.on_record(record.id, record.status)

    def phase(self, what: str, n: int) -> None:
        from cejudge_dspy.cli._progress import RunCounts

        if self.started:
            self.err.print(f"{self.display.title}: {self.display.summary()}", soft_wrap=True, markup=False)
        self.started = True
        self.display.title = what
        self.display.counts = RunCounts(n)
        self.display.items.clear()


def _print(summary: dict[str, Any], out: Path) -> None:
    from cejudge_dspy.cli.display import consistency_table, console

    stdout = console()
    stdout.print(consistency_table(summary))
    stdout.print(f"summary: {out / 'summary.json'} · `cejudge view {out}` shows the renderings and the flips")
