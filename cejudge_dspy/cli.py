"""`cejudge`: the command line. The only place that builds LMs from flags and prints with rich.

Every CEJudgeError becomes one red line on stderr and a non-zero exit; anything else is a bug and
keeps its traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import dspy

from .errors import CEJudgeError, InputError

Handler = Callable[[argparse.Namespace], int]


def add_backbone_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("backbone")
    g.add_argument(
        "--lm",
        default="embedded",
        help="embedded (default), gguf:PATH, or a dspy model string such as hosted_vllm/MODEL",
    )
    g.add_argument("--api-base", default=None, help="server URL for HTTP backbones, including /v1")
    g.add_argument("--api-key", default=None, help="API key for HTTP backbones")
    g.add_argument("--temperature", type=float, default=0.0)
    g.add_argument("--seed", type=int, default=42)
    g.add_argument("--max-tokens", type=int, default=1024)
    g.add_argument("--no-cache", action="store_true", help="do not read or write DSPy's response cache")
    g.add_argument(
        "--constrained",
        action="store_true",
        help="local GGUF models: decode under the JSON schema as a grammar (always parses, slower)",
    )


def add_program_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("program")
    g.add_argument("--task", default=None, help="declared task (see `cejudge tasks`)")
    g.add_argument(
        "--method", default="cejudge", help="cejudge (default), direct, checkeval, cejudge-checkeval"
    )
    g.add_argument("--translator", default="llm", help="llm (offline default), google, none")
    g.add_argument(
        "--orders",
        default="both",
        choices=("both", "single"),
        help="pairwise: judge A/B and B/A (default) or only A/B as the paper did",
    )
    g.add_argument(
        "--program",
        default="auto",
        help="auto (tuned program from optimized/ when present), base, or a saved program path",
    )


@contextmanager
def backbone(args: argparse.Namespace, status: Any = None) -> Iterator[dspy.LM]:
    """Build the LM from flags and make it current for the block (dspy.context, not configure)."""
    from .backbones import use_backbone

    def on_status(message: str) -> None:
        if status is not None:
            status.update(message)

    with use_backbone(
        args.lm,
        api_base=args.api_base,
        api_key=args.api_key,
        temperature=args.temperature,
        seed=args.seed,
        max_tokens=args.max_tokens,
        cache=not args.no_cache,
        on_status=on_status,
        **({"constrained": True} if args.constrained else {}),
    ) as lm:
        yield lm


def program_label(args: argparse.Namespace, task: str) -> str:
    """What --program resolves to for this run: "base" or a tuned state file with its hash (only CE-Judge
    has tuned programs). Run records keep this, so a resume never mixes two programs."""
    if args.method != "cejudge":
        return "base"
    from .manifest import program_identity

    return program_identity(task, args.program)


def announce_program(err: Any, label: str) -> None:
    """Say on stderr that a tuned program judges (nothing for the hand-written one)."""
    if label != "base":
        err.print(f"program: {label} (tuned; --program base for the hand-written one)")


def build(args: argparse.Namespace, task: str) -> dspy.Module:
    from .methods import build_program

    options = {"translator": args.translator, "orders": args.orders}
    if args.method == "cejudge" and args.program != "base":
        try:
            from .tuning import program_for_task
        except ImportError:
            pass
        else:
            return program_for_task(task, program=args.program, **options)
    return build_program(task, args.method, **options)


def parse_fields(pairs: Sequence[str] | None, flag: str = "--field") -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise InputError(f"expected KEY=VALUE, got {pair!r}", field=flag)
        out[key.strip()] = value.strip()
    return out


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
    add_program_args(p)
    add_backbone_args(p)
    p.set_defaults(handler=_run_judge)


def _run_judge(args: argparse.Namespace) -> int:
    from .display import console, verdict_panel
    from .judge_input import items_from_args
    from .tasks import load_task

    spec = load_task(args.task or ("chat" if args.response_a or args.response_b else "literary"))
    items = items_from_args(args, spec)
    out, err = console(), console(stderr=True)
    announce_program(err, program_label(args, spec.name))
    with err.status("Preparing the judge…") as status, backbone(args, status):
        program = build(args, spec.name)
        results = []
        for n, item in enumerate(items, 1):
            status.update(f"Judging item {n}/{len(items)} on {args.lm}…")
            results.append((item, program(**item.inputs()).result))
    for item, result in results:
        if args.json:
            out.print_json(json.dumps({"id": item.id, **result.to_dict()}, ensure_ascii=False))
        else:
            out.print(verdict_panel(result, spec, item.id if len(items) > 1 else None))
    return 0 if all(r.ok for _, r in results) else 1


def _tasks_parser(sub: Any) -> None:
    p = sub.add_parser("tasks", help="list declared tasks, or show a few items of one")
    p.add_argument("action", nargs="?", default="list", choices=("list", "show"))
    p.add_argument("name", nargs="?")
    p.add_argument("-n", type=int, default=3, help="items to show")
    p.add_argument("--data", help="local file or directory instead of the task's hub dataset")
    p.add_argument("--field", action="append", help="KEY=COLUMN mapping override (repeatable)")
    p.set_defaults(handler=_run_tasks)


def _run_tasks(args: argparse.Namespace) -> int:
    from .display import console, items_panels, tasks_table
    from .tasks import available_tasks, load_task

    out = console()
    if args.action == "list":
        out.print(tasks_table(available_tasks()))
        return 0
    if not args.name:
        raise InputError("`cejudge tasks show` needs a task name", field="name")
    spec = load_task(args.name)
    from .data import load_items

    items = load_items(spec, args.data, fields=parse_fields(args.field), limit=args.n)
    for panel in items_panels(spec, items[: args.n]):
        out.print(panel)
    return 0


def build_parser() -> argparse.ArgumentParser:
    from . import cli_checkeval, cli_eval

    parser = argparse.ArgumentParser(
        prog="cejudge", description="Checklist-engineered multilingual LLM judges."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _judge_parser(sub)
    _tasks_parser(sub)
    cli_eval.add_parsers(sub)
    cli_checkeval.add_parsers(sub)
    from .tuning_cli import add_optimize_args, run_optimize

    p = sub.add_parser(
        "optimize", help="tune a task's stage instructions against human labels (as optimize.py)"
    )
    add_optimize_args(p)
    p.set_defaults(handler=run_optimize)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if "optimize" in (argv if argv is not None else sys.argv[1:])[:1] and "-v" not in (argv or sys.argv):
        # DSPy and GEPA draw their own tqdm bars under ours; tqdm reads this once, at import.
        os.environ.setdefault("TQDM_DISABLE", "1")
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        try:
            return handler(args)
        except CEJudgeError:
            raise
        except Exception as exc:
            # DSPy wraps backbone failures (refused connection, bad key, model load) in its own errors.
            from .backbones import explain_backbone_error

            lm = getattr(args, "lm", None)
            explained = (
                explain_backbone_error(exc, lm, api_base=getattr(args, "api_base", None)) if lm else None
            )
            if explained is None:
                raise
            raise explained from exc
    except CEJudgeError as exc:
        from rich.text import Text

        from .display import console

        console(stderr=True).print(Text.assemble(("error: ", "bold red"), str(exc)), soft_wrap=True)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted; results written so far are kept (rerun to resume)", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
