"""What every `cejudge` command (and `optimize.py`) shares: flags, backbone construction, the program a
run uses, field parsing, and one error handler with one exit-code convention.

Exit codes: 0 success; 1 judged, but some item was not ok (unparsed or error); 2 bad input or usage
(CEJudgeError); 3 the backbone cannot be built or reached (BackboneError); 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import dspy

from cejudge_dspy.backbones import explain_backbone_error, use_backbone
from cejudge_dspy.backbones.llamacpp import DEFAULT_PARALLEL, DEFAULT_REPEAT_PENALTY
from cejudge_dspy.cli._program_args import judge_options
from cejudge_dspy.errors import CEJudgeError, InputError
from cejudge_dspy.judges import auto_choice, run_program, run_program_identity

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
    g.add_argument(
        "--repeat-penalty",
        type=float,
        default=DEFAULT_REPEAT_PENALTY,
        help=f"local GGUF models: llama.cpp's repeat penalty (default {DEFAULT_REPEAT_PENALTY:g}; 1: off)",
    )
    g.add_argument(
        "--parallel",
        type=int,
        default=None,
        help=f"local GGUF models: calls decoded together (default {DEFAULT_PARALLEL}: the batched engine, "
        "faster per judgment on 2 cores than 1, the serial engine, which decodes one call at a time; "
        "docs/measurements/speed-and-cost.md)",
    )


@contextmanager
def backbone(args: argparse.Namespace, status: Any = None) -> Iterator[dspy.LM]:
    """Build the LM from flags and make it current for the block (dspy.context, not configure)."""

    def on_status(message: str) -> None:
        if status is not None:
            status.update(message)

    with use_backbone(args.lm, on_status=on_status, **backbone_options(args)) as lm:
        yield lm


def backbone_options(args: argparse.Namespace) -> dict[str, Any]:
    """The backbone flags as `use_backbone` / `check_backbone` / `make_lm` keyword arguments (a Ray worker
    builds its LM from these)."""
    return {
        "api_base": args.api_base,
        "api_key": args.api_key,
        "temperature": args.temperature,
        "seed": args.seed,
        "max_tokens": args.max_tokens,
        "cache": not args.no_cache,
        **({"constrained": True} if args.constrained else {}),
        # Passed only when set: HTTP backbones refuse a sampler setting they do not have.
        **({"repeat_penalty": rp} if (rp := repeat_penalty(args)) != DEFAULT_REPEAT_PENALTY else {}),
        # Passed only when given: HTTP backbones refuse a setting they do not have.
        **({"parallel": n} if (n := getattr(args, "parallel", None)) is not None else {}),
    }


def repeat_penalty(args: argparse.Namespace) -> float:
    """The --repeat-penalty of a run (parsers without the flag: the default)."""
    return float(getattr(args, "repeat_penalty", DEFAULT_REPEAT_PENALTY))


def program_label(args: argparse.Namespace, task: str) -> str:
    """What --program resolves to for this run: "base" or a tuned state file with its hash (only CE-Judge
    has tuned programs). Run records keep this, so a resume never mixes two programs."""
    return run_program_identity(task, args.method, args.program)


def announce_program(err: Any, label: str, task: str | None = None, program: str = "auto") -> None:
    """Say on stderr that a tuned program judges, or why `--program auto` passed over a tuned file."""
    if label != "base":
        err.print(f"program: {label} (tuned; --program base for the hand-written one)")
    elif task is not None and program == "auto" and (why := auto_choice(task)[1]):
        err.print(f"program: base ({why})")


def build(args: argparse.Namespace, task: str) -> dspy.Module:
    return run_program(task, options=judge_options(args))


def parse_fields(pairs: Sequence[str] | None, flag: str = "--field") -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise InputError(f"expected KEY=VALUE, got {pair!r}", field=flag)
        out[key.strip()] = value.strip()
    return out


def run_command(handler: Handler, args: argparse.Namespace) -> int:
    """Run a command: every CEJudgeError (and a backbone failure DSPy wrapped) is one red line on stderr
    and its exit code; anything else is a bug and keeps its traceback."""
    try:
        try:
            return handler(args)
        except CEJudgeError:
            raise
        except Exception as exc:
            # DSPy wraps backbone failures (refused connection, bad key, model load) in its own errors.
            lm = getattr(args, "lm", None)
            explained = (
                explain_backbone_error(exc, lm, api_base=getattr(args, "api_base", None)) if lm else None
            )
            if explained is None:
                raise
            raise explained from exc
    except CEJudgeError as exc:
        from rich.text import Text

        from cejudge_dspy.cli.display import console

        console(stderr=True).print(Text.assemble(("error: ", "bold red"), str(exc)), soft_wrap=True)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted; results written so far are kept (rerun to resume)", file=sys.stderr)
        return 130
