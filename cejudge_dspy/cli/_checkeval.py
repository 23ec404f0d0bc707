"""CLI commands for CheckEval: `cejudge checklist` (in _checklist.py) and `cejudge agreement`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from cejudge_dspy.cli._checklist import add_parser as add_checklist_parser
from cejudge_dspy.errors import InputError


def add_parsers(sub: Any) -> None:
    add_checklist_parser(sub)

    p = sub.add_parser("agreement", help="inter-evaluator agreement and stability across runs (backbones)")
    p.add_argument("runs", nargs="+", help="run directories written by `cejudge evaluate --out`")
    p.add_argument("--dimension", help="agree on this dimension's score instead of the overall score")
    p.add_argument("--method", default="spearman", choices=("spearman", "kendall", "pearson"))
    p.set_defaults(handler=run_agreement)


def run_agreement(args: argparse.Namespace) -> int:
    """One row per dimension and one overall (or only --dimension): alpha, kappa, human correlations."""
    from rich.table import Table

    from cejudge_dspy.cli.display import console
    from cejudge_dspy.metrics import checkeval_agreement as agreement
    from cejudge_dspy.metrics import load_run, mean_human_score
    from cejudge_dspy.tasks import load_task

    if len(args.runs) < 2:
        raise InputError("needs at least two run directories", field="runs")
    runs = [load_run(Path(r)) for r in args.runs]
    records = [recs for _, recs in runs]
    tasks = {config.get("task") for config, _ in runs}
    if len(tasks) != 1 or None in tasks:
        raise InputError(
            f"runs must come from one task (run.json says {sorted(map(str, tasks))})", field="runs"
        )
    spec = load_task(tasks.pop())
    if spec.mode == "pairwise":  # no score to agree on: the table would be empty
        raise InputError(
            f"task {spec.name} is pairwise: agreement measures scores across runs of a pointwise task "
            "(CheckEval's, say); compare two pairwise runs with `cejudge compare RUN_A RUN_B`",
            field="runs",
        )
    dims = {d.name: d.human_key for d in spec.dimensions}
    if args.dimension is not None and args.dimension not in dims:
        raise InputError(
            f"{args.dimension!r} is not a dimension of {spec.name}: {', '.join(dims)}", field="--dimension"
        )
    rows: dict[str, dict[str, Any]] = {}
    for name in [args.dimension] if args.dimension else list(dims):
        rows[name] = agreement(records, dimension=name, human_key=dims[name], method=args.method)
    if not args.dimension:  # the item score against the mean human score, as in the run summary
        humans = {r.id: mean_human_score(r.item.label, list(dims.values())) for recs in records for r in recs}
        rows["overall"] = agreement(records, humans=humans or None, method=args.method)
    table = Table(title="Agreement across runs (raters = runs, units = items)")
    for col in ("dimension", "Krippendorff α", "Fleiss κ (questions)"):
        table.add_column(col, justify="left" if col == "dimension" else "right")
    for n in range(1, len(runs) + 1):
        table.add_column(f"{args.method} vs humans, run {n}", justify="right")
    table.add_column("spread (max - min)", justify="right")
    table.caption = "; ".join(
        f"run {n}: {r} ({c.get('lm')})" for n, (r, (c, _)) in enumerate(zip(args.runs, runs, strict=True), 1)
    )
    for name, res in rows.items():
        alpha, kappa, human = res["krippendorff_alpha"], res["fleiss_kappa"], res["human_correlation"] or {}
        per_run = [_fmt((v or {}).get("value")) for v in human.get("per_run", [None] * len(runs))]
        defined = [v for v in human.get("per_run", []) if v and v.get("value") is not None]
        spread = human["max"] - human["min"] if len(defined) > 1 else None  # one defined run: no spread
        table.add_row(
            name,
            f"{_fmt(alpha['value'])} (n={alpha['n']})",
            f"{_fmt(kappa['value'])} (n={kappa['n']})",
            *per_run,
            _fmt(spread),
        )
    console().print(table)
    return 0


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)
