"""`optimize.py` / `cejudge optimize`: the flags read once into the library's `cejudge_dspy.optimize(...)`,
which tunes a task's instructions and saves the program with its manifest; this module prints its plan,
progress and outcome.

The plan (split sizes, optimizer, estimated LM calls) is printed before anything runs; an interactive
terminal is asked to confirm unless --yes, a non-interactive run proceeds. The judge backbone is the same
`BackboneOptions` as `judge` and `evaluate` read (same flags, same adapter), so instructions are tuned
under the adapter they will be judged with. Errors follow _common.py's convention; Ctrl-C during
optimization saves what `optimize` hands back and says which program that is.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.prompt import Confirm
from rich.table import Table

from cejudge_dspy.cli._common import add_backbone_args, backbone_flags, parse_fields
from cejudge_dspy.cli.display import console as make_console
from cejudge_dspy.tuning import OPTIMIZERS

# The flags are built without DSPy: what tunes, loads and saves is imported when the command runs.
if TYPE_CHECKING:
    from cejudge_dspy.tuning import Optimization, OptimizePlan

PHASES = {
    "anchors": "anchors: train split, starting program",
    "dev-before": "dev split, before",
    "optimize": "optimizing",
    "dev-after": "dev split, after",
}


def add_optimize_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    add = parser.add_argument
    add("--task", required=True, help="task name from programs/ (e.g. chat, reasoning, literary)")
    add("--data", help="data file or directory (default: the task's declared dataset)")
    add("--field", action="append", default=[], metavar="KEY=COLUMN", help="map an item field to a column")
    add("--subset", action="append", help="keep only rows of this subset (repeatable; before the split)")
    add(
        "--reflection-lm",
        "--prompt-lm",
        dest="reflection_lm",
        help="model that proposes instructions (default: the judge backbone)",
    )
    add("--reflection-api-base", help="server for --reflection-lm (default: --api-base)")
    add("--optimizer", choices=OPTIMIZERS, default="gepa")
    add(
        "--budget",
        default="light",
        help="light, medium, heavy, or an int: GEPA metric calls, MIPROv2 trials, SIMBA steps",
    )
    add("--demos", type=int, default=0, help="few-shot demos per stage (MIPROv2/SIMBA only; default 0)")
    add("--train", type=int, default=20, help="training items (GEPA/MIPROv2 select on the last third)")
    add("--dev", type=int, default=20, help="held-out items scored before and after")
    add("--program", default="base", help="starting program: base, auto or a saved .json")
    add("--threads", type=int, default=1, help="parallel program runs (keep 1 for the embedded model)")
    add(
        "--out",
        help="where to save (default: optimized/TASK.json; GEPA resumes a run named by optimized/TASK.gepa/)",
    )
    add("--yes", "-y", action="store_true", help="do not ask for confirmation")
    add(
        "--save-anyway",
        action="store_true",
        help="save the tuned program even without a held-out gain (auto never loads such a file)",
    )
    add("--verbose", "-v", action="store_true", help="show DSPy's and the optimizer's own log")
    add_backbone_args(parser)  # --lm, --api-base, --seed, ...: the judge backbone, as for judge/evaluate
    return parser


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "optimize", help="tune a task's stage instructions against human labels (as optimize.py)"
    )
    add_optimize_args(p)
    p.set_defaults(handler=run_optimize)


def run_optimize(args: argparse.Namespace) -> int:
    console = make_console()
    try:
        return _run(args, console)
    except KeyboardInterrupt:
        make_console(stderr=True).print("interrupted before optimization started; nothing saved")
        return 130


def _run(args: argparse.Namespace, console: Console) -> int:
    """The flags read once into `optimize`'s arguments; its plan, progress and outcome printed."""
    from cejudge_dspy.tuning import optimize_task, reflection_backbone

    if not args.verbose:
        logging.getLogger("dspy").setLevel(logging.WARNING)
    lm = backbone_flags(args)
    reflection = args.reflection_lm
    if reflection and args.reflection_api_base and reflection != lm.lm:
        reflection = reflection_backbone(reflection, lm, args.reflection_api_base)

    def on_plan(plan: OptimizePlan) -> bool:
        _print_plan(console, plan)
        if not args.yes and sys.stdin.isatty() and not Confirm.ask("Start?", console=console, default=True):
            console.print("cancelled; nothing ran")
            return False
        return True

    bars = _PhaseBars(console)  # started at the first phase: the plan and its question come first
    try:
        result = optimize_task(
            args.task,
            data=args.data,
            fields=parse_fields(args.field),
            subsets=args.subset,
            backbone=lm,
            reflection=reflection,
            optimizer=args.optimizer,
            budget=args.budget,
            demos=args.demos,
            train=args.train,
            dev=args.dev,
            program=args.program,
            threads=args.threads,
            out=args.out,
            save_anyway=args.save_anyway,
            on_plan=on_plan,
            on_progress=bars.update,
        )
    finally:
        bars.stop()
    if result.report is None:
        return 1
    _print_scores(console, result.report)
    _print_outcome(console, result)
    return 0


class _PhaseBars:
    """One progress bar per phase of `optimize` (PHASES), shown from the first phase on."""

    def __init__(self, console: Console) -> None:
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self.bars: dict[str, Any] = {}

    def update(self, phase: str, done: int, total: int | None) -> None:
        if not self.bars:
            self.progress.start()
        if phase not in self.bars:
            self.bars[phase] = self.progress.add_task(PHASES.get(phase, phase), total=total)
        self.progress.update(self.bars[phase], completed=done, total=total)

    def stop(self) -> None:
        if self.bars:
            self.progress.stop()


def _print_plan(console: Console, plan: OptimizePlan) -> None:
    """What is about to run: the task, the split sizes, the optimizer and its estimated LM calls."""
    spec, log_dir = plan.spec, plan.log_dir
    skipped = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in plan.dropped.items() if n)
    console.print(
        f"task {spec.name} (v{spec.version}, {spec.mode}): {len(plan.train)} train + {len(plan.dev)} dev "
        "items" + (f" (skipped {skipped})" if skipped else "")
    )
    console.print(f"{plan.optimizer} budget {plan.budget}: estimated {plan.estimate.describe()}")
    from cejudge_dspy.tuning import Checkpoint

    if log_dir is not None and (log_dir / "cejudge_run.json").exists() and Checkpoint(log_dir).exists():
        console.print(
            f"{log_dir} has a GEPA checkpoint: this run continues it (delete {log_dir} to start over)"
        )


def _print_outcome(console: Console, result: Optimization) -> None:
    """The held-out decision, and what was saved (or why nothing was)."""
    report = result.report
    assert report is not None
    gain = report.held_out
    if gain is not None:
        console.print(f"held-out {'gain' if gain['significant'] else 'comparison'}: {gain['reason']}")
    if result.saved is None:
        console.print(
            f"nothing saved ({result.why_not}): the starting program stays the default; "
            "--save-anyway writes it for inspection (--program auto will still not load it)"
        )
        return
    if report.source == "best-so-far":
        console.print(
            "interrupted: saved the best candidate found so far (its dev score was not re-measured)"
        )
    elif report.source == "base":
        console.print("interrupted before any better candidate: saved the starting program unchanged")
    console.print(f"changed stages: {', '.join(report.changed_stages) or 'none'}")
    console.print(f"saved {result.saved} and {result.manifest_path}")


def _print_scores(console: Console, report: Any) -> None:
    table = Table(title=f"dev split ({report.dev_before.n} items)")
    for column in ("", "before", "after", "change"):
        table.add_column(column, justify="left" if not column else "right")
    before, after = report.dev_before, report.dev_after
    rows = [
        ("mean item metric", before.metric, after.metric if after else None),
        (before.corpus_name, before.corpus, after.corpus if after else None),
        ("unparsed items", before.unparsed, after.unparsed if after else None),
    ]
    for name, b, a in rows:
        fmt = lambda v: "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
        change = "-" if a is None or b is None else f"{a - b:+.3f}" if isinstance(a, float) else f"{a - b:+d}"
        table.add_row(name, fmt(b), fmt(a), change)
    console.print(table)
