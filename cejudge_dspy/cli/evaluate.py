"""CLI commands over datasets and runs: evaluate, score-predictions, compare, merge.

`evaluate` writes as it goes (see runner.py), so Ctrl-C or a crash loses at most the items in flight.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import time
from pathlib import Path
from typing import Any

from cejudge_dspy.cli.common import (
    add_backbone_args,
    add_program_args,
    announce_program,
    backbone,
    build,
    parse_fields,
    program_label,
)
from cejudge_dspy.cli.evaluate_ray import add_ray_args, check_ray_args, judge_with_ray
from cejudge_dspy.cli.presets import add_preset_arg, apply_preset, describe_preset
from cejudge_dspy.errors import InputError
from cejudge_dspy.items import Item


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "evaluate", help="judge a dataset, write results.jsonl and summary.json, print the table"
    )
    add_preset_arg(p)
    add_program_args(p)
    add_backbone_args(p)
    p.add_argument("--data", help="local file or directory (default: the task's hub dataset)")
    p.add_argument("--field", action="append", help="KEY=COLUMN mapping override (repeatable)")
    p.add_argument("--const", action="append", help="KEY=VALUE constant field, e.g. label=A (repeatable)")
    p.add_argument("--language", action="append", help="keep only this language (repeatable)")
    p.add_argument("--subset", action="append", help="keep only this subset (repeatable)")
    p.add_argument("--limit", type=int, help="seeded, language-stratified sample of N items")
    p.add_argument("--out", help="run directory (default runs/<task>-<method>[-<preset>])")
    p.add_argument("--concurrency", type=int, default=1, help="items in flight at once")
    p.add_argument("--shard", help="K/N: judge only the K-th of N deterministic shards")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for CIs (0: none)")
    p.add_argument("--force-new", action="store_true", help="move the run in --out aside and start over")
    add_ray_args(p)
    p.set_defaults(handler=run_evaluate)

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


def shard_key(item: Item) -> str:
    """What decides an item's shard: its group, else its instruction. Items that share an instruction
    (MM-Eval prompts, LitEval sources) land in one shard, so its concepts and translation are computed
    once, as in a single run; shard sizes are less even than hashing ids would make them."""
    from cejudge_dspy.evaluation.groups import group_key

    return group_key(item)  # --ray groups items the same way


def shard_of(key: str, n: int) -> int:
    """Deterministic shard (0-based) of a key: the same on every machine and every run."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % n


def parse_shard(value: str | None) -> tuple[int, int] | None:
    if not value:
        return None
    k, sep, n = value.partition("/")
    if not sep or not k.isdigit() or not n.isdigit() or not 1 <= int(k) <= int(n):
        raise InputError(f"expected K/N with 1 <= K <= N, got {value!r}", field="--shard")
    return int(k), int(n)


def run_evaluate(args: argparse.Namespace) -> int:
    from cejudge_dspy.cli.display import console
    from cejudge_dspy.cli.run_setup import check_lm, check_options, check_program_options, run_identity
    from cejudge_dspy.data import field_mapping, fingerprint, load_items
    from cejudge_dspy.evaluation.run_dir import lock
    from cejudge_dspy.evaluation.runner import prepare_run_dir
    from cejudge_dspy.methods.fingerprint import prompt_fingerprint
    from cejudge_dspy.tasks import load_task

    # Everything is checked before anything is written: a typo never leaves a run behind.
    if not args.task:
        raise InputError("is required for evaluate", field="--task")
    check_options(args)
    check_ray_args(args)
    shard = parse_shard(args.shard)
    spec = load_task(apply_preset(args, args.task))
    if args.preset:
        console(stderr=True).print(describe_preset(args, spec.name), soft_wrap=True)
    check_program_options(args, spec)
    check_lm(args)
    program = build(args, spec.name)
    fields, constants = parse_fields(args.field), parse_fields(args.const, "--const")
    items = load_items(
        spec,
        args.data,
        fields=fields,
        constants=constants,
        languages=args.language,
        subsets=args.subset,
        limit=args.limit,
        seed=args.seed,
    )
    if shard:
        items = [i for i in items if shard_of(shard_key(i), shard[1]) == shard[0] - 1]
    out = Path(args.out or f"runs/{args.task}-{args.method}" + (f"-{args.preset}" if args.preset else ""))
    config = run_identity(
        args,
        spec,
        program_label(args, spec.name),
        fingerprint(spec, args.data),
        *field_mapping(spec, fields, constants),
        prompts=prompt_fingerprint(program),
    )
    if shard:
        config["shard"] = f"{shard[0]}/{shard[1]}"
    with lock(out):
        records = prepare_run_dir(out, config, force_new=args.force_new)
        return _judge_and_summarize(args, spec, program, items, records, out, config)


def _judge_and_summarize(
    args: argparse.Namespace,
    spec: Any,
    program: Any,
    items: list[Item],
    records: list[Any],
    out: Path,
    config: dict[str, Any],
) -> int:
    from cejudge_dspy.cli.display import (
        console,
        decision_rules_table,
        dimension_tables,
        reliability_table,
        summary_table,
    )
    from cejudge_dspy.evaluation.runner import (
        RESULTS,
        SUMMARY,
        judge_items,
        pending_items,
        read_records,
        read_timing,
        run_timing,
        write_summary,
    )
    from cejudge_dspy.evaluation.summary import summarize

    started = time.time()
    todo = pending_items(items, records)
    err = console(stderr=True)
    err.print(
        f"{len(items)} items, {len(items) - len(todo)} already in {out / RESULTS}, {len(todo)} to judge"
    )
    announce_program(err, config["program"], spec.name if args.method == "cejudge" else None, args.program)
    if todo and args.ray is not None:
        judge_with_ray(args, spec, todo, out, config, err)
    elif todo:
        from cejudge_dspy.cli.progress import RunDisplay, live

        display = RunDisplay(f"{spec.name} · {args.method}", len(todo))

        def tick(record: Any) -> None:
            display.on_record(record.id, record.status)

        with live(err, display, transient=False), backbone(args, display):
            asyncio.run(
                judge_items(
                    todo,
                    ItemProgram(program, todo, display.on_stage),
                    out / RESULTS,
                    task=spec.name,
                    method=args.method,
                    concurrency=args.concurrency,
                    on_record=tick,
                )
            )
            display.update("")
    final = read_records(out / RESULTS)
    summary = summarize(final, spec, n_resamples=args.bootstrap, seed=args.seed)
    summary["run"] = config
    if todo or read_timing(out / SUMMARY) is None:
        summary["timing"] = run_timing(read_timing(out / SUMMARY), started, time.time())
    else:  # nothing was judged in this session: the run's timing stays what it was
        summary["timing"] = read_timing(out / SUMMARY)
    write_summary(out / SUMMARY, summary)
    stdout = console()
    stdout.print(summary_table(summary))
    if (dims := dimension_tables(summary)) is not None:
        stdout.print(dims)
    if (rules := decision_rules_table(summary)) is not None:
        stdout.print(rules)
    if (calibration := summary.get("decision_rules", {}).get("calibration")) and calibration["n"]:
        stdout.print(reliability_table(calibration))
    stdout.print(f"results: {out / RESULTS} · summary: {out / SUMMARY}")
    return _exit_code(err, [r for r in final if r.id in {i.id for i in items}])


def _exit_code(err: Any, records: list[Any]) -> int:
    """1 when every item of the run errored (a configuration fault, not a result), else 0."""
    errors = [r for r in records if r.status == "error"]
    if records and len(errors) == len(records):
        err.print(f"error: every item failed ({len(errors)}); the first: {errors[0].error}", soft_wrap=True)
        return 1
    if errors:
        err.print(f"warning: {len(errors)} items failed; rerun the same command to retry them")
    return 0


class ItemProgram:
    """The judge program, with each item's stage progress sent to `on_stage(item_id, event)`.

    The runner calls `acall(**item.inputs())`; the item is found again by its inputs (items with the same
    inputs take turns), and its progress callback is set inside the item's own task."""

    def __init__(self, program: Any, items: list[Item], on_stage: Any) -> None:
        self.program = program
        self.on_stage = on_stage
        self.ids: dict[str, list[str]] = {}
        for item in items:
            self.ids.setdefault(self._key(item.inputs()), []).append(item.id)

    @staticmethod
    def _key(inputs: dict[str, Any]) -> str:
        return json.dumps(inputs, sort_keys=True, ensure_ascii=False, default=str)

    async def acall(self, **inputs: Any) -> Any:
        from cejudge_dspy.usage import on_progress

        waiting = self.ids.get(self._key(inputs)) or ["item"]
        item_id = waiting.pop(0) if len(waiting) > 1 else waiting[0]
        with on_progress(lambda event: self.on_stage(item_id, event)):
            return await self.program.acall(**inputs)


def run_score_predictions(args: argparse.Namespace) -> int:
    from rich.table import Table

    from cejudge_dspy.cli.display import console
    from cejudge_dspy.evaluation.predictions import average, score_prediction_files, strict_average

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
    from cejudge_dspy.evaluation.compare import compare_runs

    console().print(
        compare_table(
            compare_runs(Path(args.runs[0]), Path(args.runs[1]), rule_a=args.rule_a, rule_b=args.rule_b)
        )
    )
    return 0


def run_merge(args: argparse.Namespace) -> int:
    from cejudge_dspy.cli.display import console, summary_table
    from cejudge_dspy.evaluation.merge import merge_runs

    summary = merge_runs([Path(r) for r in args.runs], Path(args.out), partial=args.partial)
    console().print(summary_table(summary))
    if part := summary.get("partial"):
        missing = ", ".join(f"{k}/{part['of']}" for k in part["missing"])
        console(stderr=True).print(f"partial merge: shards {missing} are missing from {args.out}")
    return 0
