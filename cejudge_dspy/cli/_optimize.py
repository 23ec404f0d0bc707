"""`optimize.py` / `cejudge optimize`: tune a task's instructions and save the program with its manifest.

The plan (split sizes, optimizer, estimated LM calls) is printed before anything runs; an interactive
terminal is asked to confirm unless --yes, a non-interactive run proceeds. The judge backbone is built
by the same `backbone()` as `judge` and `evaluate` (same flags, same adapter), so instructions are tuned
under the adapter they will be judged with. Errors follow _common.py's convention; Ctrl-C during
optimization saves what `optimize` hands back and says which program that is.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.prompt import Confirm
from rich.table import Table

from cejudge_dspy.cli._common import add_backbone_args, backbone, parse_fields
from cejudge_dspy.cli.display import console as make_console
from cejudge_dspy.tasks import TaskSpec, load_task
from cejudge_dspy.tuning import OPTIMIZERS

# The flags are built without DSPy: what tunes, loads and saves is imported when the command runs.
if TYPE_CHECKING:
    from cejudge_dspy.tuning import Budget, CallEstimate, OptimizeReport

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


def _reflection_lm(args: argparse.Namespace, lm: Any) -> Any:
    if not args.reflection_lm or args.reflection_lm == args.lm:
        return lm  # one model instance: an embedded model is not loaded twice
    from cejudge_dspy.backbones import make_lm

    local = args.reflection_lm == "embedded" or args.reflection_lm.startswith("gguf:")
    base = args.reflection_api_base or (None if local else args.api_base)
    # Proposals should vary between iterations, so the reflection model samples (GEPA's advice).
    return make_lm(args.reflection_lm, api_base=base, seed=args.seed, temperature=1.0, max_tokens=4096)


def run_optimize(args: argparse.Namespace) -> int:
    console = make_console()
    try:
        return _run(args, console)
    except KeyboardInterrupt:
        make_console(stderr=True).print("interrupted before optimization started; nothing saved")
        return 130


def _run(args: argparse.Namespace, console: Console) -> int:
    from cejudge_dspy.data import load_items
    from cejudge_dspy.judges import check_save_path, default_path
    from cejudge_dspy.tuning import estimate_calls, parse_budget, split_items

    spec, budget = load_task(args.task), parse_budget(args.budget)
    out = Path(args.out) if args.out is not None else default_path(spec)
    check_save_path(out)  # a bad name, a planted symlink or an unwritable folder: before any tuning
    if not args.verbose:
        logging.getLogger("dspy").setLevel(logging.WARNING)
    fields = parse_fields(args.field)
    items = load_items(spec, args.data, fields=fields or None, subsets=args.subset, seed=args.seed)
    train, dev, dropped = split_items(items, args.train, args.dev, args.seed)
    estimate = estimate_calls(spec, train, dev, optimizer=args.optimizer, budget=budget, demos=args.demos)
    log_dir = out.parent / f"{out.stem}.gepa" if args.optimizer == "gepa" else None
    _print_plan(console, spec, args.optimizer, budget, estimate, train, dev, dropped, log_dir)
    if not args.yes and sys.stdin.isatty() and not Confirm.ask("Start?", console=console, default=True):
        console.print("cancelled; nothing ran")
        return 1
    report, lm, reflection_lm = _optimize_with_progress(args, console, spec, budget, train, dev, log_dir)
    manifest = report.manifest(
        task_lm=lm.model, reflection_lm=reflection_lm.model, data=args.data or spec.dataset.hub_id or None
    )
    manifest.update(fields=fields, subsets=args.subset or [], dropped=dropped, estimate=estimate.__dict__)
    # The item ids of each split, so "measured on items not used for tuning" can be checked and redone.
    manifest["split_ids"] = {"train": [ex.id for ex in train], "dev": [ex.id for ex in dev]}
    _print_scores(console, report)
    return _save_if_gained(args, console, report, out, manifest)


def _print_plan(
    console: Console,
    spec: TaskSpec,
    optimizer: str,
    budget: Budget,
    estimate: CallEstimate,
    train: list[Any],
    dev: list[Any],
    dropped: dict[str, int],
    log_dir: Path | None,
) -> None:
    """What is about to run: the task, the split sizes, the optimizer and its estimated LM calls."""
    skipped = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in dropped.items() if n)
    console.print(
        f"task {spec.name} (v{spec.version}, {spec.mode}): {len(train)} train + {len(dev)} dev items"
        + (f" (skipped {skipped})" if skipped else "")
    )
    console.print(f"{optimizer} budget {budget}: estimated {estimate.describe()}")
    from cejudge_dspy.tuning import Checkpoint

    if log_dir is not None and (log_dir / "cejudge_run.json").exists() and Checkpoint(log_dir).exists():
        console.print(
            f"{log_dir} has a GEPA checkpoint: this run continues it (delete {log_dir} to start over)"
        )


def _optimize_with_progress(
    args: argparse.Namespace,
    console: Console,
    spec: TaskSpec,
    budget: Budget,
    train: list[Any],
    dev: list[Any],
    log_dir: Path | None,
) -> tuple[OptimizeReport, Any, Any]:
    """Run `optimize` on the judge backbone with a progress bar per phase; the report and both LMs."""
    from cejudge_dspy.tuning import optimize

    with (
        backbone(args) as lm,
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        ) as progress,
    ):
        bars: dict[str, Any] = {}

        def on_progress(phase: str, done: int, total: int | None) -> None:
            if phase not in bars:
                bars[phase] = progress.add_task(PHASES.get(phase, phase), total=total)
            progress.update(bars[phase], completed=done, total=total)

        reflection_lm = _reflection_lm(args, lm)
        report = optimize(
            spec,
            train,
            dev,
            optimizer=args.optimizer,
            budget=budget,
            demos=args.demos,
            reflection_lm=reflection_lm,
            seed=args.seed,
            program=args.program,
            lm=lm,
            on_progress=on_progress,
            num_threads=args.threads,
            log_dir=log_dir,
        )
    return report, lm, reflection_lm


def _save_if_gained(
    args: argparse.Namespace, console: Console, report: OptimizeReport, out: Path, manifest: dict[str, Any]
) -> int:
    """Save the tuned program only with a significant held-out gain (or --save-anyway), saying which."""
    gain = report.held_out
    if gain is not None:
        console.print(f"held-out {'gain' if gain['significant'] else 'comparison'}: {gain['reason']}")
    if not (gain and gain["significant"]) and not args.save_anyway:
        why = "the tuned program was not re-scored on the dev split" if gain is None else "no held-out gain"
        console.print(
            f"nothing saved ({why}): the starting program stays the default; "
            "--save-anyway writes it for inspection (--program auto will still not load it)"
        )
        return 0
    from cejudge_dspy.judges import save_program

    written = save_program(report.program, out, manifest)
    if report.source == "best-so-far":
        console.print(
            "interrupted: saved the best candidate found so far (its dev score was not re-measured)"
        )
    elif report.source == "base":
        console.print("interrupted before any better candidate: saved the starting program unchanged")
    console.print(f"changed stages: {', '.join(report.changed_stages) or 'none'}")
    console.print(f"saved {out} and {written}")
    return 0


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
