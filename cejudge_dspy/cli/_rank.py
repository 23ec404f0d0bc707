"""`cejudge rank`: several systems' answers to the same prompts, judged into a ranking with intervals.

Flags to typed options (the judge's as `evaluate` builds it, one judge or a panel; the data as
`rank.load_systems` reads it; the schedule as `rank.RankOptions`), then `rank.rank(...)`, the same call a
Python user makes, then the tables. Everything is checked before the run directory opens.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cejudge_dspy.cli._common import add_backbone_args, backbone_flags, parse_fields
from cejudge_dspy.cli._panel import add_panel_arg
from cejudge_dspy.cli._program_args import add_program_args
from cejudge_dspy.cli._run_args import add_run_args
from cejudge_dspy.errors import InputError

if TYPE_CHECKING:
    from cejudge_dspy.backbones import BackboneOptions

SCHEDULE_CHOICES = ("all-pairs", "baseline", "adaptive")  # rank.SCHEDULES, without importing DSPy


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "rank",
        help="rank several systems from their answers to the same prompts (Bradley-Terry strengths or "
        "mean scores, with bootstrap intervals)",
    )
    add_program_args(p)
    add_backbone_args(p)
    add_panel_arg(p)
    data = p.add_argument_group("the systems' answers")
    data.add_argument(
        "--data",
        action="append",
        required=True,
        metavar="[NAME=]PATH",
        help="one long table (a row per prompt and system), or one file per system, NAME=PATH or PATH "
        "(named after its stem) (repeatable)",
    )
    data.add_argument(
        "--field",
        action="append",
        help="KEY=COLUMN mapping override, as evaluate's; also system=COLUMN (a long table's system "
        "column, default 'system') and prompt=COLUMN (what names a prompt; default the task's group, "
        "else the instruction) (repeatable)",
    )
    data.add_argument("--const", action="append", help="KEY=VALUE constant field (repeatable)")
    data.add_argument("--language", action="append", help="keep only this language (repeatable)")
    data.add_argument("--system", action="append", help="rank only this system (repeatable)")
    data.add_argument("--prompts", type=int, help="only the first N prompts in reading order")
    data.add_argument(
        "--human",
        action="append",
        metavar="KEY",
        help="the human score of an answer is the mean of these keys of its label (repeatable; default "
        "the task's dimensions); with them, the ranking is compared with the humans'",
    )
    how = p.add_argument_group("the schedule")
    how.add_argument(
        "--schedule",
        choices=SCHEDULE_CHOICES,
        default="all-pairs",
        help="pairwise tasks: all pairs, every system against --baseline, or adaptive rounds spent on the "
        "pairs whose strengths' intervals overlap most (default all-pairs)",
    )
    how.add_argument("--baseline", metavar="NAME", help="the system every other meets (--schedule baseline)")
    how.add_argument("--budget", type=int, help="adaptive: comparisons in all (default: half of all pairs)")
    how.add_argument("--round-size", type=int, help="adaptive: pairs per round (default: the systems)")
    p.add_argument("--out", help="run directory (default runs/rank-<task>-<method or panel>)")
    add_run_args(p)
    p.set_defaults(handler=run_rank)


def run_rank(args: argparse.Namespace) -> int:
    from cejudge_dspy.cli._program_args import program_flags
    from cejudge_dspy.cli.display import console, ranking_tables
    from cejudge_dspy.evaluate import check_bound, check_out, panel_identity
    from cejudge_dspy.rank import RankOptions, load_systems
    from cejudge_dspy.tasks import load_task

    flags = program_flags(args)
    if not flags.task:
        raise InputError("is required for rank", field="--task")
    check_bound("concurrency", args.concurrency)
    check_bound("bootstrap", args.bootstrap)
    if args.prompts is not None and args.prompts < 1:
        raise InputError(f"must be at least 1, got {args.prompts}", field="--prompts")
    judge, lm = flags.options(), backbone_flags(args)
    if args.out is not None:
        check_out(Path(args.out) if args.out.strip() else None, "--out")
    spec = load_task(flags.task)
    options = RankOptions(
        schedule=args.schedule,
        baseline=args.baseline,
        budget=args.budget,
        round_size=args.round_size,
        bootstrap=args.bootstrap,
        seed=lm.seed,
        concurrency=args.concurrency,
    )
    options.check(spec)
    program, label, members, panel = _judge_of(args, spec, flags, judge, lm)
    fields, constants = parse_fields(args.field), parse_fields(args.const, "--const")
    answers = load_systems(
        spec,
        args.data,
        fields=fields,
        constants=constants,
        human_keys=args.human,
        languages=args.language,
        systems=args.system,
        prompts=args.prompts,
    )
    method = judge.method if members is None else "panel"
    config = _identity(args, spec, judge, label, method, lm, fields, constants, program)
    if members is not None:
        config |= panel_identity(members, panel, lm)
    out = Path(args.out or f"runs/rank-{spec.name}-{method}")
    err = console(stderr=True)
    err.print(
        f"{len(answers.systems)} systems ({', '.join(answers.systems)}), {len(answers.prompts)} prompts, "
        f"{len(answers.answers)} answers · {spec.mode} · {out}",
        soft_wrap=True,
        markup=False,
    )
    summary = _judge(args, spec, answers, out, program, method, options, config, members, lm)
    for table in ranking_tables(summary):
        console().print(table)
    console().print(f"results: {out / 'results.jsonl'} · ranking: {out / 'ranking.json'}")
    return 0


def _judge_of(args: argparse.Namespace, spec: Any, flags: Any, judge: Any, lm: BackboneOptions) -> Any:
    """(program, its label, the panel's members or None, the panel's description), checked before any
    run directory opens, as `evaluate` builds them."""
    from cejudge_dspy.cli._panel import panel_members
    from cejudge_dspy.evaluate import build_panel, check_backbone_spec, check_panel
    from cejudge_dspy.judges import run_program, run_program_identity

    members = panel_members(args, flags.methods, judge, lm)
    if members is None:
        judge.check(spec)
        check_backbone_spec(lm, judge.method)
        label = run_program_identity(spec.name, judge.method, judge.program)
        return run_program(spec.name, options=judge), label, None, None
    check_panel(spec, members, lm, args.panel or "--lm/--method")
    program, panel = build_panel(spec, members, judge.tie_band, args.panel or "--lm/--method")
    return program, "panel", members, panel


def _identity(
    args: argparse.Namespace,
    spec: Any,
    judge: Any,
    label: str,
    method: str,
    lm: BackboneOptions,
    fields: dict[str, str],
    constants: dict[str, str],
    program: Any,
) -> dict[str, Any]:
    """What run.json records besides the ranking's own settings: the evaluate run identity's judge and
    backbone settings, with the data named by its answers' digest (rank.rank records it)."""
    from cejudge_dspy.evaluate import run_identity
    from cejudge_dspy.judges import prompt_fingerprint

    config = run_identity(
        spec, judge, program=label, backbone=lm, data=None, data_sha256="",
        fields=fields, constants=constants, prompts=prompt_fingerprint(program), seed=lm.seed,
    )  # fmt: skip
    config["method"] = method
    config["languages"] = sorted(args.language) if args.language else None
    for key in ("data", "data_sha256", "id_scheme", "subsets", "limit", "first", "shard", "preset"):
        config.pop(key, None)
    config.pop("headline", None)
    config["rank_data"] = {"sources": args.data, "human": args.human, "systems": args.system}
    return config


def _judge(
    args: argparse.Namespace,
    spec: Any,
    answers: Any,
    out: Path,
    program: Any,
    method: str,
    options: Any,
    config: dict[str, Any],
    members: Any,
    backbone: BackboneOptions,
) -> dict[str, Any]:
    """rank.rank under the backbone (or the panel's), with a live count of the records written."""
    from cejudge_dspy.backbones import use_backbone
    from cejudge_dspy.cli._progress import RunDisplay, live
    from cejudge_dspy.cli.display import console
    from cejudge_dspy.evaluate import panel_backbone
    from cejudge_dspy.rank import rank

    display = RunDisplay(f"{spec.name} · rank · {method}", _expected(answers, options, spec))
    if members is None:
        lm = use_backbone(backbone.lm, on_status=display.update, **backbone.kwargs())
    else:
        lm = panel_backbone(members, backbone, display.update)
    with live(console(stderr=True), display, transient=False), lm:
        summary = rank(
            spec,
            answers,
            out,
            program=program,
            method=method,
            options=options,
            identity=config,
            force_new=args.force_new,
            on_record=lambda record: display.on_record(record.id, record.status),
        )
        display.update("")
    return summary


def _expected(answers: Any, options: Any, spec: Any) -> int:
    """Items the run may judge, for the progress bar (the adaptive schedule: its budget)."""
    from cejudge_dspy.rank import adaptive_budget, pointwise_items, schedule

    if spec.mode == "pointwise":
        return len(pointwise_items(answers))
    if options.schedule == "adaptive":
        return adaptive_budget(answers, options)
    return len(schedule(answers, options))
