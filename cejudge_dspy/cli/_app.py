"""`cejudge`: the entry point and the `judge` and `tasks` commands; the other command groups live in
_evaluate.py, _calibrate.py, _checkeval.py, _optimize.py and _view.py, and what they share in _common.py
(see there for exit codes).

The parser is built without DSPy, litellm, Ray, llama.cpp, datasets, numpy or scipy (a command imports what
it needs when it runs), so `cejudge --help`, `cejudge tasks` and every `--help` answer at once: a command
module keeps its module-level imports to argparse, rich, tasks, errors, the CLI's own flag modules and the
lazy faces of judges and tuning (tests/cli/test_startup.py checks it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from cejudge_dspy.cli import _backbones as cli_backbones
from cejudge_dspy.cli import _calibrate as cli_calibrate
from cejudge_dspy.cli import _checkeval as cli_checkeval
from cejudge_dspy.cli import _consistency as cli_consistency
from cejudge_dspy.cli import _evaluate as cli_eval
from cejudge_dspy.cli import _optimize as cli_optimize
from cejudge_dspy.cli import _rank as cli_rank
from cejudge_dspy.cli import _view as cli_view
from cejudge_dspy.cli._common import (
    INTERRUPTED,
    add_backbone_args,
    backbone,
    backbone_flags,
    bound,
    check_flag,
    end_process,
    parse_fields,
    run_command,
)
from cejudge_dspy.cli._panel import add_panel_arg
from cejudge_dspy.cli._presets import add_preset_arg, describe_preset, resolve_preset
from cejudge_dspy.cli._program_args import add_program_args, program_flags
from cejudge_dspy.errors import InputError

SHOWN = bound("-n", "items", 1)


def _judge_parser(sub: Any) -> None:
    p = sub.add_parser("judge", help="judge one item (or each item of a JSON/JSONL file)")
    p.add_argument("--instruction", help="the instruction or source text")
    p.add_argument("--response", help="pointwise: the response to score")
    p.add_argument("--response-a", help="pairwise: the first response")
    p.add_argument("--response-b", help="pairwise: the second response")
    p.add_argument("--language", default="en", help="language of the instruction (and responses)")
    p.add_argument(
        "--response-language", default=None, help="pointwise: language of the response, if different"
    )
    p.add_argument("--file", help="a JSON object, JSON list or JSONL file of items with the same keys")
    p.add_argument("--json", action="store_true", help="print JSON results instead of panels")
    add_preset_arg(p)
    add_program_args(p)
    add_backbone_args(p)
    add_panel_arg(p)
    p.set_defaults(handler=_run_judge)


def _run_judge(args: argparse.Namespace) -> int:
    from cejudge_dspy.cli._judge_input import items_from_args
    from cejudge_dspy.cli._panel import judge_with_panel, panel_members
    from cejudge_dspy.cli._progress import JudgeDisplay, live
    from cejudge_dspy.cli.display import console, verdict_panel
    from cejudge_dspy.evaluate import program_notes
    from cejudge_dspy.judges import check_method_backbone, run_program, run_program_identity
    from cejudge_dspy.tasks import load_task
    from cejudge_dspy.usage import clock, on_progress

    flags = program_flags(args)
    task = flags.task or ("chat" if args.response_a or args.response_b else "literary")
    resolved = resolve_preset(args.preset, flags, task)
    spec, judge = load_task(resolved.task), resolved.options
    out, err = console(), console(stderr=True)
    if args.preset:
        err.print(describe_preset(args.preset, flags, resolved), soft_wrap=True)
    lm = backbone_flags(args)
    if (members := panel_members(args, flags.methods, judge, lm)) is not None:
        return judge_with_panel(args, spec, items_from_args(args, spec), members, judge, lm)
    judge.check(spec)
    check_method_backbone(judge.method, lm.lm, lm.api_base)
    items = items_from_args(args, spec)
    label = run_program_identity(spec.name, judge.method, judge.program)
    for line in program_notes(label, spec.name, judge):
        err.print(line)
    # One live line while waiting: the stage in flight, the item's LM calls done of expected, its clock.
    display = JudgeDisplay(err, len(items))
    with live(err, display, transient=True), backbone(lm, display), on_progress(display.on_stage):
        program = run_program(spec.name, options=judge)
        results = []
        for n, item in enumerate(items, 1):
            display.start_item(n)
            started = time.monotonic()
            results.append((item, program(**item.inputs()).result))
            which = f"item {n}/{len(items)} judged" if len(items) > 1 else "judged"
            err.print(f"{which} in {clock(time.monotonic() - started)}", style="dim")
    for item, result in results:
        if args.json:
            out.print_json(json.dumps({"id": item.id, **result.to_dict()}, ensure_ascii=False))
        else:
            out.print(verdict_panel(result, spec, item.id if len(items) > 1 else None, item))
    return 0 if all(r.ok for _, r in results) else 1


def _tasks_parser(sub: Any) -> None:
    p = sub.add_parser("tasks", help="list declared tasks, or show a few items of one")
    p.add_argument("action", nargs="?", default="list", choices=("list", "show"))
    p.add_argument("name", nargs="?")
    p.add_argument("-n", type=int, default=3, help=f"items to show ({SHOWN.describe()})")
    p.add_argument("--data", help="local file or directory instead of the task's hub dataset")
    p.add_argument("--field", action="append", help="KEY=COLUMN mapping override (repeatable)")
    p.set_defaults(handler=_run_tasks)


def _run_tasks(args: argparse.Namespace) -> int:
    from cejudge_dspy.cli.display import console, items_panels, tasks_table
    from cejudge_dspy.tasks import available_tasks, broken_declarations, load_task

    out = console()
    if args.action == "list":
        out.print(tasks_table(available_tasks()))
        for error in broken_declarations().values():
            line = f"warning: skipped a declaration: {error}"
            console(stderr=True).print(line, soft_wrap=True, markup=False)
        return 1 if broken_declarations() else 0
    if not args.name:
        raise InputError("`cejudge tasks show` needs a task name", field="name")
    check_flag(SHOWN, args.n)
    spec = load_task(args.name)
    from cejudge_dspy.data import load_items

    items = load_items(spec, args.data, fields=parse_fields(args.field), limit=args.n, first=True)
    for panel in items_panels(spec, items[: args.n]):
        out.print(panel)
    return 0


def _check_one_backbone(args: argparse.Namespace) -> None:
    """--lm and --method name a panel's members when repeated, in the commands that take a panel (judge,
    evaluate); elsewhere a second value is one line, never silently dropped."""
    given = vars(args)
    if "panel" in given:
        return
    for flag, dest in (("--lm", "lm_all"), ("--method", "method_all")):
        if len(set(given.get(dest) or [])) > 1:
            raise InputError(
                "is given more than once; only `cejudge judge` and `evaluate` take a panel", field=flag
            )


class _Parser(argparse.ArgumentParser):
    """argparse, with a flag the command does not have named with its nearest flag (`--temprature`: did
    you mean --temperature?)."""

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            import difflib

            sub = next(a for a in self._actions if isinstance(a, argparse._SubParsersAction))
            known = list(sub.choices[parsed.command]._option_string_actions)
            close = [m for x in extra if x.startswith("--") for m in difflib.get_close_matches(x, known, n=1)]
            hint = f" (did you mean {close[0]}?)" if close else ""
            self.error(f"unrecognized arguments: {' '.join(extra)}{hint}")
        return parsed


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="cejudge", description="Checklist-engineered multilingual LLM judges.")
    sub = parser.add_subparsers(dest="command", required=True)
    _judge_parser(sub)
    _tasks_parser(sub)
    cli_eval.add_parsers(sub)
    cli_consistency.add_parsers(sub)
    cli_rank.add_parsers(sub)
    cli_calibrate.add_parsers(sub)
    cli_checkeval.add_parsers(sub)
    cli_optimize.add_parsers(sub)
    cli_view.add_parsers(sub)
    cli_backbones.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(argv if argv is not None else sys.argv[1:])
    if args_list[:1] == ["optimize"] and not {"-v", "--verbose"} & set(args_list):
        # DSPy and GEPA draw their own tqdm bars under ours; tqdm reads this once, at import.
        os.environ.setdefault("TQDM_DISABLE", "1")
    args = build_parser().parse_args(args_list)

    def handler(args: argparse.Namespace) -> int:
        _check_one_backbone(args)
        return args.handler(args)

    code = run_command(handler, args)
    if code == INTERRUPTED and argv is None:  # the `cejudge` script or `python -m`: this process is ours
        end_process(code)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
