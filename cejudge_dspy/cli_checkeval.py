"""CLI commands for CheckEval: `cejudge checklist build` and `cejudge agreement`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .cli import add_backbone_args, backbone
from .errors import InputError


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("checklist", help="build a task's CheckEval checklist once, as a reviewable file")
    p.add_argument("action", choices=("build", "show"))
    p.add_argument("--task", required=True)
    p.add_argument("--out", help="checklist file (default checklists/<task>.json)")
    p.add_argument("--no-augment", action="store_true", help="keep only the declared seed questions")
    add_backbone_args(p)
    p.set_defaults(handler=run_checklist)

    p = sub.add_parser("agreement", help="inter-evaluator agreement and stability across runs (backbones)")
    p.add_argument("runs", nargs="+", help="run directories written by `cejudge evaluate --out`")
    p.add_argument("--dimension", help="agree on this dimension's score instead of the overall score")
    p.add_argument("--method", default="spearman", choices=("spearman", "kendall", "pearson"))
    p.set_defaults(handler=run_agreement)


def run_checklist(args: argparse.Namespace) -> int:
    from rich.table import Table

    from .checklist_build import Checklist, build_checklist
    from .display import console
    from .tasks import load_task

    spec = load_task(args.task)
    err = console(stderr=True)
    if args.action == "show":
        checklist = Checklist.load(spec, args.out)
    else:
        with (
            err.status(f"Building the {spec.name} checklist on {args.lm}…") as status,
            backbone(args, status),
        ):
            checklist = build_checklist(spec, augment=not args.no_augment)
        path = checklist.save(Path(args.out) if args.out else None)
        err.print(f"wrote {path}")
    table = Table(title=f"{spec.name} checklist: questions kept (dropped) per dimension and origin")
    for col in ("dimension", "seed", "diversified", "elaborated", "kept", "dropped"):
        table.add_column(col, justify="left" if col == "dimension" else "right")
    for dim in spec.dimensions:
        qs = [q for q in checklist.questions if q.dimension == dim.name]
        by_origin = [sum(q.kept for q in qs if q.origin == o) for o in ("seed", "diversified", "elaborated")]
        table.add_row(
            dim.name, *map(str, by_origin), str(sum(q.kept for q in qs)), str(sum(not q.kept for q in qs))
        )
    console().print(table)
    reasons: dict[str, int] = {}
    for q in checklist.questions:
        if not q.kept:
            reasons[str(q.drop_reason)] = reasons.get(str(q.drop_reason), 0) + 1
    if reasons:
        console().print("dropped because: " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())))
    return 0


def run_agreement(args: argparse.Namespace) -> int:
    from rich.table import Table

    from .checkeval import agreement
    from .compare import load_run
    from .display import console

    if len(args.runs) < 2:
        raise InputError("needs at least two run directories", field="runs")
    runs = [load_run(Path(r)) for r in args.runs]
    result = agreement(
        [records for _, records in runs],
        dimension=args.dimension,
        method=args.method,
        human_key=args.dimension,
    )
    table = Table(title="Agreement across runs (raters = runs, units = items)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("n", justify="right")
    for key in ("krippendorff_alpha", "fleiss_kappa"):
        m = result.get(key) or {}
        table.add_row(key, _fmt(m.get("value")), str(m.get("n", "")))
    human = result.get("human_correlation") or {}
    for (config, _), value in zip(runs, human.get("per_run", []), strict=False):
        table.add_row(
            f"{args.method} with humans: {config.get('lm')} ({config.get('method')})",
            _fmt((value or {}).get("value")),
            str((value or {}).get("n", "")),
        )
    for k in ("min", "max", "mean", "std"):
        if k in human:
            table.add_row(f"{args.method} spread: {k}", _fmt(human[k]), "")
    console().print(table)
    return 0


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)
