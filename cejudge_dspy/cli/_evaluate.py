"""CLI commands over datasets and runs: evaluate, score-predictions, compare, merge.

`evaluate` writes as it goes (see `evaluate.judge_items`), so Ctrl-C or a crash loses at most the items in
flight.
This module checks the options and inputs, picks the shard and opens the run directory; the judging and
the tables are _evaluate_run.py's, and the commands over runs already written (score-predictions, compare,
merge) are _compare.py's, registered here.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cejudge_dspy.cli._common import add_backbone_args, build, parse_fields, program_label
from cejudge_dspy.cli._compare import add_parsers as add_compare_parsers
from cejudge_dspy.cli._evaluate_ray import add_ray_args, check_ray_args
from cejudge_dspy.cli._panel import add_panel_arg
from cejudge_dspy.cli._presets import add_preset_arg, apply_preset, describe_preset
from cejudge_dspy.cli._program_args import add_program_args
from cejudge_dspy.cli._run_args import add_data_args, add_run_args, load_data_items
from cejudge_dspy.cli._selective import add_selective_args
from cejudge_dspy.errors import InputError

if TYPE_CHECKING:  # the parser is built without DSPy (data imports it)
    from cejudge_dspy.data import Item


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
    add_ray_args(p)
    p.set_defaults(handler=run_evaluate)
    add_compare_parsers(sub)  # score-predictions, compare, merge


def shard_key(item: Item) -> str:
    """What decides an item's shard: its group, else its instruction. Items that share an instruction
    (MM-Eval prompts, LitEval sources) land in one shard, so its concepts and translation are computed
    once, as in a single run; shard sizes are less even than hashing ids would make them."""
    from cejudge_dspy.evaluate import group_key

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
    from cejudge_dspy.cli._evaluate_run import judge_and_summarize
    from cejudge_dspy.cli._panel import build_panel, check_panel, panel_identity, panel_members
    from cejudge_dspy.cli._run_setup import check_lm, check_options, check_program_options, run_identity
    from cejudge_dspy.cli.display import console
    from cejudge_dspy.data import field_mapping, fingerprint
    from cejudge_dspy.judges import prompt_fingerprint
    from cejudge_dspy.runs import item_ids, lock, prepare_run_dir
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
    members = panel_members(args)
    if members is None:
        check_program_options(args, spec)
        check_lm(args)
        program = build(args, spec.name)
    else:
        check_panel(args, spec, members)
        program, panel = build_panel(args, spec, members)
    args.members = members
    fields, constants = parse_fields(args.field), parse_fields(args.const, "--const")
    items = load_data_items(args, spec, fields, constants)
    if shard:
        items = [i for i in items if shard_of(shard_key(i), shard[1]) == shard[0] - 1]
    _say_unlabelled(spec, items, field_mapping(spec, fields, constants)[0].get("label"))
    method = args.method if members is None else "panel"
    # --task named a declared task, and task names are plain (tasks/_parsing.py): the default stays in ./runs
    out = Path(args.out or f"runs/{args.task}-{method}" + (f"-{args.preset}" if args.preset else ""))
    config = run_identity(
        args,
        spec,
        program_label(args, spec.name) if members is None else "panel",
        fingerprint(spec, args.data),
        *field_mapping(spec, fields, constants),
        prompts=prompt_fingerprint(program),
    )
    if shard:
        config["shard"] = f"{shard[0]}/{shard[1]}"
    if members is not None:
        config |= panel_identity(args, members, panel)
    config["items"] = item_ids([i.id for i in items])  # what readers and merge check a run's records against
    with lock(out):
        records = prepare_run_dir(out, config, force_new=args.force_new)
        return judge_and_summarize(args, spec, program, items, records, out, config)


def _say_unlabelled(spec: Any, items: list[Item], label_column: str | None) -> None:
    """One stderr line when items have no gold label (they get verdict shares or score distributions, not
    the task's metric), naming the declared label column a file lacked, so a forgotten `--field label=`
    is seen before the run, not after it."""
    unlabelled = sum(i.label is None for i in items)
    if not unlabelled:
        return
    line = f"{unlabelled} of {len(items)} items have no gold label: they get no {spec.metric}"
    if unlabelled == len(items) and label_column:
        line += f" (the data has no '{label_column}' column; map yours with --field label=COLUMN)"
    from cejudge_dspy.cli.display import console

    console(stderr=True).print(line, markup=False, soft_wrap=True)
