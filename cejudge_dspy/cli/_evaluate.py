"""`cejudge evaluate`: the flags, read once into `EvaluateOptions`, the library's `evaluate` called with a
live display, then the run's tables and the exit code. The commands over runs already written
(score-predictions, compare, merge) are _compare.py's, registered here."""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from cejudge_dspy.cli._common import add_backbone_args, backbone_options, parse_fields
from cejudge_dspy.cli._compare import add_parsers as add_compare_parsers
from cejudge_dspy.cli._panel import add_panel_arg, panel_members
from cejudge_dspy.cli._presets import add_preset_arg, describe_preset, resolve_preset
from cejudge_dspy.cli._program_args import add_program_args, program_flags
from cejudge_dspy.cli._run_args import add_data_args, add_run_args
from cejudge_dspy.cli._selective import add_selective_args
from cejudge_dspy.errors import InputError
from cejudge_dspy.evaluate import BOUNDS, EvaluateProgress


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "evaluate", help="judge a dataset, write results.jsonl and summary.json, print the table"
    )
    add_preset_arg(p)
    add_program_args(p)
    add_backbone_args(p)
    add_panel_arg(p)
    add_data_args(p)
    p.add_argument("--language", action="append", help="keep only this language (repeatable)")
    p.add_argument("--out", help="run directory (default runs/<task>-<method or panel>[-<preset>])")
    p.add_argument("--shard", help="K/N: judge only the K-th of N deterministic shards")
    add_run_args(p)
    add_selective_args(p)
    g = p.add_argument_group("ray (optional extra: pip install 'cejudge-dspy[ray]')")
    g.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="judge on Ray actors: a cluster's ADDRESS (host:port, or auto for RAY_ADDRESS), "
        "or none to start Ray on this machine (127.0.0.1 only); --concurrency is then per actor",
    )
    g.add_argument("--ray-actors", type=int, default=None, help="actors (default: the cluster's CPUs)")
    g.add_argument(
        "--ray-cpus-per-actor",
        type=float,
        default=1.0,
        help=f"CPUs each actor reserves ({BOUNDS['ray_cpus_per_actor'].describe()}; default 1)",
    )
    p.set_defaults(handler=run_evaluate)
    add_compare_parsers(sub)  # score-predictions, compare, merge


def parse_shard(value: str | None) -> tuple[int, int] | None:
    if not value:
        return None
    k, sep, n = value.partition("/")
    if not sep or not k.isdigit() or not n.isdigit() or not 1 <= int(k) <= int(n):
        raise InputError(f"expected K/N with 1 <= K <= N, got {value!r}", field="--shard")
    return int(k), int(n)


def run_evaluate(args: argparse.Namespace) -> int:
    from cejudge_dspy.cli.display import console, run_tables
    from cejudge_dspy.evaluate import EvaluateOptions, RayOptions, check_options, evaluate
    from cejudge_dspy.tasks import load_task

    flags = program_flags(args)
    if not flags.task:
        raise InputError("is required for evaluate", field="--task")
    if args.ray is None and args.ray_actors is not None:
        raise InputError("needs --ray", field="--ray-actors")
    ray = RayOptions(args.ray, args.ray_actors, args.ray_cpus_per_actor) if args.ray is not None else None
    options = EvaluateOptions(
        task=flags.task,
        data=args.data,
        judge=flags.options(),
        lm=args.lm,
        out=args.out,
        concurrency=args.concurrency,
        limit=args.limit,
        first=args.first,
        seed=args.seed,
        languages=args.language,
        subsets=args.subset,
        shard=parse_shard(args.shard),
        bootstrap=args.bootstrap,
        abstain_below=args.abstain_below,
        confidence=args.confidence,
        force_new=args.force_new,
        ray=ray,
        preset=args.preset,
    )
    check_options(options)  # the run's own flags first, before the task is read
    resolved = resolve_preset(args.preset, flags, flags.task)
    if args.preset:
        console(stderr=True).print(describe_preset(args.preset, flags, resolved), soft_wrap=True)
    from cejudge_dspy.files import paused_gc

    with paused_gc():  # the backbone flags' checks import DSPy: a million objects, no cycles (files._gc)
        lm_options = backbone_options(args)
    members = panel_members(args, flags.methods, resolved.options, lm_options)
    options = replace(options, judge=resolved.options, lm_options=lm_options, panel=members)
    options = replace(
        options,
        task=resolved.task,  # a preset's declaration; the run directory keeps the name given
        out=options.run_dir,
        panel_source=args.panel or "panel",
        fields=parse_fields(args.field),
        constants=parse_fields(args.const, "--const"),
        headline=resolved.headline,
    )
    run = evaluate(options, progress=LiveProgress(console(stderr=True)))
    for table in run_tables(run.summary, load_task(resolved.task).mode):
        console().print(table)
    console().print(f"results: {run.results_path} · summary: {run.summary_path}")
    return _exit_code(console(stderr=True), run.records, run.errors)


def _exit_code(err: Any, records: list[Any], errors: list[Any]) -> int:
    """1 when every item of the run errored (a configuration fault, not a result), else 0."""
    if records and len(errors) == len(records):
        err.print(f"error: every item failed ({len(errors)}); the first: {errors[0].error}", soft_wrap=True)
        return 1
    if errors:
        err.print(f"warning: {len(errors)} items failed; rerun the same command to retry them")
    return 0


class LiveProgress(EvaluateProgress):
    """`evaluate`'s progress on stderr: its notes as lines, and while items are judged the run's bar with
    one line per item in flight (cli/_progress.py's RunDisplay); on Ray, a line of per-worker counts."""

    def __init__(self, err: Any) -> None:
        self.err = err
        self.display: Any = None
        self.worker_counts: dict[str, Any] = {}

    def note(self, line: str) -> None:
        self.err.print(line, soft_wrap=True, markup=False)

    def status(self, message: str) -> None:
        if self.display is not None:
            self.display.update(message)

    @contextmanager
    def judging(self, title: str, total: int) -> Iterator[None]:
        from cejudge_dspy.cli._progress import RunDisplay, live

        self.display = RunDisplay(title, total)
        self.display.show_workers(self.worker_counts)
        with live(self.err, self.display, transient=False):
            yield

    def stage(self, item_id: str, event: Any) -> None:
        self.display.on_stage(item_id, event)

    def record(self, record: Any) -> None:
        self.display.on_record(record.id, record.status)

    def workers(self, workers: dict[str, Any]) -> None:
        self.worker_counts = workers

    def ready(self) -> None:  # the clock, the rate and the ETA count judging, not Ray's start
        self.display.counts.started = time.monotonic()
        self.display.update("")
