"""`cejudge checklist build|show|review`: a task's CheckEval checklist as a file a person reviews.

`build` never overwrites a file that holds a person's review unless `--force`: it writes beside it and
says where. `review FILE` numbers the questions (1 to N, in file order) and, with `--drop N ... --reason
CODE[: note]` or `--keep N ... --reason TEXT`, records that person's decision in the file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from cejudge_dspy.cli._common import add_backbone_args, backbone, backbone_flags
from cejudge_dspy.errors import DataError, InputError
from cejudge_dspy.files import read_json


def add_parser(sub: Any) -> None:
    p = sub.add_parser("checklist", help="build a task's CheckEval checklist once, as a reviewable file")
    p.add_argument("action", choices=("build", "show", "review"))
    p.add_argument("file", nargs="?", help="review/show: the checklist file (show: default the task's)")
    p.add_argument("--task", help="build, show: the declared task")
    p.add_argument("--out", help="build: checklist file (default checklists/<task>.json); show: the file")
    p.add_argument("--no-augment", action="store_true", help="keep only the declared seed questions")
    p.add_argument("--force", action="store_true", help="build: overwrite a reviewed checklist")
    p.add_argument("--drop", type=int, nargs="+", action="extend", default=[], metavar="N")
    p.add_argument("--keep", type=int, nargs="+", action="extend", default=[], metavar="N")
    p.add_argument(
        "--reason",
        help="review: why; for --drop a code (yes_means_worse, off_dimension, about_source, duplicate, "
        "unclear, unanswered) optionally followed by ': note'",
    )
    add_backbone_args(p)
    p.set_defaults(handler=run_checklist)


def run_checklist(args: argparse.Namespace) -> int:
    from cejudge_dspy.cli.display import console
    from cejudge_dspy.judges.checkeval import Checklist
    from cejudge_dspy.tasks import load_task

    if args.action == "review":
        return _review(args)
    if args.drop or args.keep or args.reason:
        raise InputError(f"--drop, --keep and --reason belong to `checklist review`, not {args.action}")
    if args.action == "build":
        checklist, path = _build(args)
    else:
        from cejudge_dspy.judges.checkeval import default_checklist_path

        source = args.file or args.out
        if not args.task and not source:
            raise InputError("`cejudge checklist show` needs --task or the checklist FILE", field="--task")
        spec = load_task(args.task or _task_of(_existing(source, "FILE")))
        checklist = Checklist.load(spec, source)
        path = Path(source) if source else default_checklist_path(spec)
    console().print(_summary(checklist, load_task(checklist.task)))
    unreviewed = sum(q.drop_reason == "filter_failed" for q in checklist.questions)
    if unreviewed:
        console(stderr=True).print(
            f"{unreviewed} generated question(s) went unreviewed (filter_failed) and are left out: keep the "
            f"good ones with `cejudge checklist review {path} --keep N --reason TEXT`",
            soft_wrap=True,
            markup=False,
        )
    return 0


def _build(args: argparse.Namespace) -> tuple[Any, Path]:
    from cejudge_dspy.cli.display import console
    from cejudge_dspy.judges.checkeval import (
        beside,
        build_checklist,
        default_checklist_path,
        overwrite_hazard,
    )
    from cejudge_dspy.tasks import load_task

    if not args.task:
        raise InputError("`cejudge checklist build` needs the task", field="--task")
    if args.file:
        raise InputError(f"build writes --out, it takes no FILE (got {args.file!r})", field="--out")
    spec = load_task(args.task)
    err = console(stderr=True)
    wanted = Path(args.out) if args.out else default_checklist_path(spec)
    hazard = None if args.force else overwrite_hazard(wanted)
    # Decided before the build, which takes minutes: a reviewed file is never lost to a rebuild.
    target = beside(wanted) if hazard else wanted
    lm = backbone_flags(args)
    with err.status(f"Building the {spec.name} checklist on {lm.lm}…") as status, backbone(lm, status):
        checklist = build_checklist(spec, augment=not args.no_augment)
    path = checklist.save(target)
    if hazard:
        line = f"{wanted} {hazard}, so it was left as it is; this build is {path} (--force overwrites)"
    else:
        line = f"wrote {path}"
    err.print(line, soft_wrap=True, markup=False)
    for where, reason in checklist.failures.items():
        err.print(f"failed: {where}: {reason}", soft_wrap=True, markup=False)
    return checklist, path


def _review(args: argparse.Namespace) -> int:
    from cejudge_dspy.cli.display import console
    from cejudge_dspy.judges.checkeval import REVIEW_REASONS, Checklist
    from cejudge_dspy.tasks import load_task

    path = _existing(args.file, "FILE")
    checklist = Checklist.load(load_task(_task_of(path)), path)
    if args.drop and args.keep:
        raise InputError("give --drop or --keep, not both: each takes its own --reason", field="--keep")
    numbers, keep = (args.keep, True) if args.keep else (args.drop, False)
    flag = "--keep" if keep else "--drop"
    if numbers:
        if not args.reason or not args.reason.strip():
            raise InputError(f"{flag} needs --reason: say why, it is recorded in the file", field="--reason")
        code, _, note = args.reason.partition(":")
        code, note = code.strip(), note.strip() or None
        if not keep and code not in REVIEW_REASONS:
            raise InputError(
                f"{args.reason!r} does not start with a drop reason; use one of {', '.join(REVIEW_REASONS)}, "
                'optionally followed by ": note"',
                field="--reason",
            )
        for n in numbers:
            if not 1 <= n <= len(checklist.questions):
                raise InputError(f"no question {n}: {path} has 1 to {len(checklist.questions)}", field=flag)
        changed = [
            (n, checklist.review(n, keep, None if keep else code, args.reason.strip() if keep else note))
            for n in numbers
        ]
        if not checklist.kept():
            raise InputError(f"that would leave {path} with no question kept; nothing changed", field=flag)
        checklist.save(path)
        for n, q in changed:
            what = "kept" if keep else f"dropped ({code})"
            console(stderr=True).print(f"{what} #{n}: {q.text}", soft_wrap=True, markup=False)
    console().print(_numbered(checklist))
    return 0


def _existing(file: str | None, flag: str) -> Path:
    if not file:
        raise InputError(f"name the checklist {flag}, e.g. checklists/summeval.json")
    path = Path(file)
    if not path.is_file():
        raise InputError(f"no checklist file at {path}")
    return path


def _task_of(path: Path) -> str:
    """The task a checklist file names, read before the file is checked against that task's declaration."""
    try:
        task = read_json(path, DataError).get("task")
    except AttributeError:
        task = None
    if not isinstance(task, str) or not task:
        raise DataError(
            f"{path}: not a checklist file (no 'task' name); build one with `cejudge checklist build`"
        )
    return task


def _summary(checklist: Any, spec: Any) -> Any:
    from rich.table import Table

    table = Table(title=f"{spec.name} checklist: questions kept (dropped) per dimension and origin")
    for col in ("dimension", "seed", "diversified", "elaborated", "kept", "dropped"):
        table.add_column(col, justify="left" if col == "dimension" else "right")
    for dim in spec.dimensions:
        qs = [q for q in checklist.questions if q.dimension == dim.name]
        by_origin = [sum(q.kept for q in qs if q.origin == o) for o in ("seed", "diversified", "elaborated")]
        table.add_row(
            dim.name, *map(str, by_origin), str(sum(q.kept for q in qs)), str(sum(not q.kept for q in qs))
        )
    reasons: dict[str, int] = {}
    for q in checklist.questions:
        if not q.kept:
            reasons[str(q.drop_reason)] = reasons.get(str(q.drop_reason), 0) + 1
    if reasons:
        table.caption = "dropped because: " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))
    return table


def _numbered(checklist: Any) -> Any:
    """Every question with the number `--drop`/`--keep` take, its place, origin and status."""
    from rich.table import Table

    table = Table(title=f"{checklist.task} checklist: numbers for --drop N / --keep N")
    for col in ("#", "dimension / sub-dimension", "origin", "status", "question"):
        table.add_column(col, justify="right" if col == "#" else "left")
    for n, q in enumerate(checklist.questions, 1):
        status = "kept" if q.kept else f"dropped: {q.drop_reason}"
        if q.by_person and q.review_note:
            status += f" ({q.review_note})"
        table.add_row(str(n), f"{q.dimension} / {q.subdimension}", q.origin, status, q.text)
    return table
